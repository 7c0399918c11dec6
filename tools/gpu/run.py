#!/usr/bin/env python3
"""Check and time tilec's generated CUDA kernels on a GPU.

Reads cases.json (written by tools/gpu_prepare.sh next to the generated
.cu files and their launch manifests), compiles each kernel with NVRTC
through CuPy, runs it on fresh random inputs with the outputs poisoned
(NaN), compares against a torch reference in higher precision (within
the manifest's "library" tolerance for the output's dtype), and times
the "bench" cases with CUDA events (median of warmed runs, inputs rotated;
plain GEMMs alternate with torch.matmul on the same inputs, vs_cublas,
attention with cuDNN's SDPA, vs_cudnn, grouped-query attention with the
SDPA torch picks, vs_sdpa).
Integer and bool outputs are poisoned with int_poison(dtype) and compared
exactly (rel_err is then the count of wrong elements).  Prints one JSON
line per case, then a table.  Exit status 1 if any check failed.

  python3 run.py cases.json [--only PART,=NAME,...] [--repeat N]

--only keeps the cases whose name contains one of the comma-separated
PARTs or is one of the =NAMEs.  Each launch runs the build for aligned
launches (TILEC_ALIGNED=1) when its tensors allow, as the runtime does;
TILEC_GENERAL_BUILD=1 runs the general build everywhere instead.  TILEC_NVRTC_EXTRA (space-separated) adds
NVRTC options, e.g. --Ofast-compile=mid, to measure what they cost.
"""
import argparse, json, math, os, sys, time

import cupy as cp
import torch

# launch_manifest.py sits next to this file in bench-carry/, one level up
# in the source tree (tools/).
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_here, os.path.dirname(_here)]
import launch_manifest  # noqa: E402

DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
      "f64": torch.float64, "i32": torch.int32, "i64": torch.int64,
      "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool,
      "fp8e4m3": torch.float8_e4m3fn, "fp8e5m2": torch.float8_e5m2,
      # i4: the bytes, two elements each (flat; unpack_i4 reads them).
      "i4": torch.uint8}
# Integer and bool outputs compare exactly; they are poisoned with this
# value (NaN for floats), which no reference here produces.
INT_POISON = -0x5A5A5A5


def int_poison(dt):
    """INT_POISON, or for 8-bit integers a value of their range the
    kernels' small inputs do not give (-91 for i8, 165 for u8)."""
    return {torch.int8: -0x5B, torch.uint8: 0xA5}.get(dt, INT_POISON)


def evaluate(expr, env):
    """A launch-manifest expression tree over env (C integer semantics)."""
    return launch_manifest.evaluate(expr, env)


def device_sms():
    """The SMs of this GPU, which a persistent kernel's grid reads; a case
    whose shapes give launch_manifest.device_key("sms") launches as on a
    GPU of that many instead (a smaller grid: each block walks more
    tiles)."""
    return cp.cuda.Device().attributes["MultiProcessorCount"]


# How a scalar is passed, by the C type the manifest gives.
SCALAR = {"double": cp.float64, "float": cp.float32, "long long": cp.int64,
          "int": cp.int32, "bool": cp.bool_, "int8_t": cp.int8,
          "uint8_t": cp.uint8}


# --- references, in float64 (float32 for attention's big shapes) -----------

def ref_gemm(t, s):
    return t["A"].double() @ t["B"].double()


def ref_gemm_at(t, s):
    return t["A"].double().T @ t["B"].double()


def ref_gemm_bt(t, s):
    return t["A"].double() @ t["B"].double().T


def ref_gemm_tn(t, s):
    return t["A"].double().T @ t["B"].double().T


def ref_softmax(t, s):
    return torch.softmax(t["X"].double(), dim=1)


def ref_rmsnorm(t, s):
    x = t["X"].double()
    return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + s["eps"]) * t["W"].double()


def ref_attention(t, s, causal):
    q, k, v = (t[n].double() if t[n].numel() < 2**26 else t[n].float() for n in "QKV")
    out = torch.empty_like(q)
    B = q.shape[0]
    for b in range(B):
        # [S][H][D] -> [H][S][D]
        qb, kb, vb = (x[b].transpose(0, 1) for x in (q, k, v))
        for h0 in range(0, qb.shape[0], 4):
            qq, kk, vv = qb[h0:h0 + 4], kb[h0:h0 + 4], vb[h0:h0 + 4]
            sc = qq @ kk.transpose(1, 2) / math.sqrt(q.shape[-1])
            if causal:
                S = sc.shape[-1]
                mask = torch.ones(S, S, dtype=torch.bool, device=sc.device).triu(1)
                sc.masked_fill_(mask, float("-inf"))
            out[b, :, h0:h0 + 4, :] = (torch.softmax(sc, dim=-1) @ vv).transpose(0, 1)
    return out


def attention_anchor(sets, causal, gqa=False):
    """cuDNN's SDPA on each input set's Q, K, V (copied to [B][H][S][D]
    once): calls to time beside the case, or None where torch has no
    cuDNN attention for them.  Grouped-query attention (fewer K, V heads)
    takes the SDPA torch picks itself (enable_gqa), which the GQA bar
    names: cuDNN's has no grouped form in every torch."""
    try:
        from torch.nn.attention import sdpa_kernel, SDPBackend
        F = torch.nn.functional
        calls = []
        for t, _ in sets:
            q, k, v = (t[n].transpose(1, 2).contiguous() for n in "QKV")

            def call(q=q, k=k, v=v):
                if gqa:
                    F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=True)
                    return
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
            call()
            calls.append(call)
        torch.cuda.synchronize()
        return calls
    except Exception as e:  # no cuDNN back end for this shape or dtype
        print(json.dumps({"anchor": "sdpa-cudnn", "error": str(e)[:200]}), flush=True)
        return None


def ref_bias_gelu(t, s):
    v = t["X"].double() + t["bias"].double()
    return 0.5 * v * (1 + torch.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))


def ref_colsum(t, s):
    return t["X"].double().sum(dim=0)


def ref_layernorm(t, s):
    x = t["X"].double()
    mu = x.mean(dim=1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=1, keepdim=True)
    return (x - mu) * torch.rsqrt(var + s["eps"]) * t["W"].double() + t["B"].double()


def ref_gemm_bias_relu(t, s):
    return torch.relu(t["A"].double() @ t["B"].double() + t["bias"].double())


def ref_gemm_splitk(t, s):
    return t["C@start"].double() + t["A"].double() @ t["B"].double()


# The samples beyond the first ten (each the computation its opening
# comment states); a tuple of outputs where a kernel writes several.

def ref_add_rmsnorm(t, s):
    h = (t["X"].float() + t["R"].float()).half().double()
    y = h * torch.rsqrt((h * h).mean(dim=1, keepdim=True) + s["eps"]) * t["W"].double()
    return h, y


def ref_rope(t, s):
    x = t["X"].double()
    half = x.shape[-1] // 2
    cs = t["CS"].double()[t["P"].long()]            # [T][D]
    c, sn = cs[:, None, :half], cs[:, None, half:]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * c - x2 * sn, x2 * c + x1 * sn), dim=-1)


def ref_transpose(t, s):
    return t["X"].double().T


def ref_cross_entropy(t, s):
    x = t["X"].double()
    lab = t["L"].long()
    lse = torch.logsumexp(x, dim=1)
    picked = x.gather(1, lab.clamp(min=0)[:, None])[:, 0]
    return torch.where(lab < 0, 0.0, lse - picked)


def ref_topk(t, s):
    g = t["G"].double()
    k = t["I"].shape[1]
    idx = torch.sort(g, dim=1, descending=True, stable=True).indices[:, :k]
    return torch.softmax(g.gather(1, idx), dim=1), idx


def ref_gqa_attention(t, s):
    rep = t["Q"].shape[2] // t["K"].shape[2]
    kv = {n: t[n].repeat_interleave(rep, dim=2) for n in "KV"}
    return ref_attention({"Q": t["Q"], **kv}, s, s["CAUSAL"])


def ref_gemm_w8a8(t, s):
    acc = t["A"].double() @ t["W"].double().T       # exact: |sum| < 2^53
    return acc * t["SA"].double()[:, None] * t["SW"].double()[None, :]


def ref_gemm_fp8(t, s):
    acc = t["A"].double() @ t["W"].double().T       # products exact in f64
    return acc * t["SA"].double()[:, None] * t["SW"].double()[None, :]


def ref_paged_decode(t, s):
    q = t["Q"].double()                                # [B][H][D]
    B, H, D = q.shape
    page, hkv = s["PAGE"], t["KC"].shape[2]
    out = torch.zeros_like(q)
    for b in range(B):
        n = int(t["CL"][b].item())
        if n == 0:
            continue
        pages = t["BT"][b, :-(-n // page)].long()
        k, v = (t[c][pages].reshape(-1, hkv, D)[:n].double() for c in ("KC", "VC"))
        for h in range(H):
            g = h // (H // hkv)
            p = torch.softmax(k[:, g] @ q[b, h] * s["scale"], dim=0)
            out[b, h] = p @ v[:, g]
    return out


def ref_paged_decode_split(t, s):
    """paged_decode_split_gqa's partials: split sp of sequence b holds its
    pages [sp * per, (sp + 1) * per), per = ceil(ceil(CL[b] / PAGE) / NSPLIT)."""
    q = t["Q"].double()                                # [B][H][D]
    B, H, D = q.shape
    page, hkv, ns = s["PAGE"], t["KC"].shape[2], s["NSPLIT"]
    opart = torch.zeros(B, H, ns, D, dtype=torch.float64, device=q.device)
    lse = torch.full((B, H, ns), float("-inf"), dtype=torch.float64, device=q.device)
    for b in range(B):
        n = int(t["CL"][b].item())
        npg = -(-n // page)
        if n == 0:
            continue
        per = -(-npg // ns)
        pages = t["BT"][b, :npg].long()
        k, v = (t[c][pages].reshape(-1, hkv, D)[:n].double() for c in ("KC", "VC"))
        for h in range(H):
            g = h // (H // hkv)
            sc = k[:, g] @ q[b, h] * s["scale"]
            for sp in range(ns):
                a, e = sp * per * page, min(n, (sp + 1) * per * page)
                if a < e:
                    opart[b, h, sp] = torch.softmax(sc[a:e], dim=0) @ v[a:e, g]
                    lse[b, h, sp] = torch.logsumexp(sc[a:e], dim=0)
    return opart, lse


def ref_moe_gemm(t, s):
    x, w = t["X"].double(), t["W"].double()
    y = torch.zeros(x.shape[0], w.shape[1], dtype=torch.float64, device=x.device)
    r = 0
    for e, c in enumerate(t["CNT"].tolist()):
        y[r:r + c] = x[r:r + c] @ w[e].T
        r += c
    return y


def moe_counts(t, s, g):
    """CNT: a random split of the T rows over the experts (some empty)."""
    cnt = t["CNT"]
    cuts = torch.randint(0, s["T"] + 1, (cnt.numel() - 1,), generator=g, device="cuda").sort().values
    edges = torch.cat((cuts.new_zeros(1), cuts, cuts.new_full((1,), s["T"])))
    cnt.copy_(edges.diff().to(cnt.dtype))


def unpack_i4(packed, shape):
    """The values of an i4 tensor from its bytes (a flat uint8 tensor, two
    elements a byte, the even one in the low nibble), as int64 of shape."""
    q = packed.long()
    nib = torch.stack((q & 15, q >> 4), dim=-1).flatten()[:math.prod(shape)]
    return ((nib ^ 8) - 8).reshape(shape)


def ref_gemm_w4a16(t, s):
    # i4 weights (bytes, two a byte), or i8 ones (the W8A16 variants)
    w = t["W"].reshape(s["N"], s["K"]).double() if t["W"].dtype == torch.int8 else \
        unpack_i4(t["W"], (s["N"], s["K"])).double()
    g = s["GROUP"]
    # Zero points in f16, or in i4 (bytes, packed as the weights are).
    z = t["Z"]
    if z.dtype == torch.uint8:
        z = unpack_i4(z, (s["K"] // g, s["N"]))
    w = (w - z.double().repeat_interleave(g, dim=0).T) * t["S"].double().repeat_interleave(g, dim=0).T
    # each weight rounded once to the operands' type, as the program
    # stores it into its 16-bit tile
    w = w.float().to(t["A"].dtype).double()
    return t["A"].double() @ w.T


def ref_gemm_w4a16_splitk(t, s):
    return t["C@start"].double() + ref_gemm_w4a16(t, s)


def ref_i4_fragment(t, s):
    x = unpack_i4(t["X"], (s["M"], s["N"])).float()
    return x * 2 + unpack_i4(t["V"], (s["N"],)).float()


def ref_i4_shared(t, s):
    x = unpack_i4(t["X"], (s["M"], s["N"]))
    wrap = lambda v: ((v & 15) ^ 8) - 8  # noqa: E731
    return x.float() * 3, wrap(x + 5), wrap(-x)


def ref_i4_store(t, s):
    q = torch.clamp(torch.round(t["X"].double() * 4), -8, 7).long()
    return q, ((q + 9) & 15 ^ 8) - 8


def ref_row_vectors(t, s):
    x, ids = t["X"].double(), t["ids"].long()
    ok = (ids >= 0) & (ids < s["V"])
    y = torch.where(ok[:, None], x[ids.clamp(0, s["V"] - 1)], torch.zeros_like(x[:1]))
    z = torch.zeros((s["T"], s["D"]), dtype=torch.float64, device=x.device)
    k = min(s["n"], s["V"], s["T"])
    z[:k] = x[:k]
    return y, z


def ref_i4_pipelined(t, s):
    x = unpack_i4(t["X"], (s["M"], s["K"])).double()
    steps = -(-s["K"] // 64)
    x = torch.nn.functional.pad(x, (0, steps * 64 - s["K"])).reshape(s["M"], steps, 64)
    w = torch.arange(1, steps + 1, dtype=torch.float64, device=x.device)
    return (x * w[None, :, None]).sum(1)


def ref_conv2d(t, s):
    # float64 where both operands are small enough, else float32 for both
    # (conv2d takes one dtype).
    small = all(t[n].numel() < 2**24 for n in "XF")
    x, f = (t[n].double() if small else t[n].float() for n in "XF")
    y = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), f.permute(0, 3, 1, 2), padding=s["PAD"])
    return y.permute(0, 2, 3, 1)


def attn_bwd_heads(t, s):
    """Each (batch, head) of attention_bwd.c's inputs: the index, P (the
    softmax the forward took) and the head's Q, K, V, dO, in float64."""
    B, S, H, D = t["Q"].shape
    for b in range(B):
        for h in range(H):
            q, k, v, do = (t[n][b, :, h].double() for n in ("Q", "K", "V", "dO"))
            sc = q @ k.T * s["scale"]
            yield b, h, sc, q, k, v, do


def attn_bwd_inputs(t, s, g):
    """LSE and Delta as the forward and attn_bwd_delta make them: the
    log-sum-exp of the scores, and rowsum(dO * O) with O = softmax V."""
    for b, h, sc, q, k, v, do in attn_bwd_heads(t, s):
        t["LSE"][b, h] = torch.logsumexp(sc, dim=1).float()
        t["Delta"][b, h] = (do * (torch.softmax(sc, dim=1) @ v)).sum(dim=1).float()


def ref_attn_bwd(t, s, want):
    outs = {n: torch.zeros_like(t["Q"], dtype=torch.float64) for n in want}
    for b, h, sc, q, k, v, do in attn_bwd_heads(t, s):
        p = torch.exp(sc - t["LSE"][b, h].double()[:, None])
        ds = p * (do @ v.T - t["Delta"][b, h].double()[:, None])
        grads = {"dQ": ds @ k * s["scale"], "dK": ds.T @ q * s["scale"], "dV": p.T @ do}
        for n in want:
            outs[n][b, :, h] = grads[n]
    return tuple(outs[n] for n in want)


def ref_attn_bwd_delta(t, s):
    return (t["dO"].double() * t["O"].double()).sum(dim=-1).permute(0, 2, 1)


def ref_flash_decode_split(t, s):
    q, k, v = (t[n].double() for n in "QKV")       # [B][H][D], [B][S][HKV][D]
    B, H, D = q.shape
    S, HKV, ns = k.shape[1], k.shape[2], s["NSPLIT"]
    per = -(-(-(-S // ns)) // s["BLOCK_N"]) * s["BLOCK_N"]
    opart = torch.zeros(B, H, ns, D, dtype=torch.float64, device=q.device)
    lse = torch.full((B, H, ns), float("-inf"), dtype=torch.float64, device=q.device)
    for g in range(HKV):
        hs = slice(g * (H // HKV), (g + 1) * (H // HKV))
        sc = torch.einsum("bhd,bsd->bhs", q[:, hs], k[:, :, g]) * s["scale"]
        for sp in range(ns):
            a, e = sp * per, min(S, sp * per + per)
            if a < e:
                opart[:, hs, sp] = torch.softmax(sc[..., a:e], dim=-1) @ v[:, a:e, g]
                lse[:, hs, sp] = torch.logsumexp(sc[..., a:e], dim=-1)
    return opart, lse


def ref_flash_decode_combine(t, s):
    lse, part = t["Lse"].double(), t["Opart"].double()
    w = torch.softmax(lse, dim=-1)
    return (w[..., None] * part).sum(dim=2)


# The programs of tests/gpu_regress/, each the computation its opening
# comment states.

def ref_bool_shared(t, s):
    return torch.where(t["M"], t["Z"].double(), -t["Z"].double())


def ref_bool_tensor(t, s):
    return t["M"].to(torch.int32)


def ref_copy_x(t, s):
    return t["X"].double()


def shifted(x, by):
    """y[i] = x[i + by] where 0 <= i + by < len(x), else 0."""
    y = torch.zeros_like(x)
    n = x.shape[0]
    lo, hi = max(0, -by), min(n, n - by)
    if lo < hi:
        y[lo:hi] = x[lo + by:hi + by]
    return y


def ref_neg_origin_covered(t, s):
    return shifted(t["X"][1].double(), -1)


def ref_neg_origin_uncovered(t, s):
    x = t["X"].double()
    return x[1, s["row"]] if 0 <= s["row"] < s["N"] else torch.zeros_like(x[1, 0])


def ref_neg_origin_store(t, s):
    return shifted(t["X"].double(), -s["o"])


def ref_nested_parallel_smem(t, s):
    return t["X"].double() * 2 * t["C"].double()[:, None]


def ref_anchored_inner_loop(t, s):
    x = t["X"].double()
    return x + t["W"].double() * x.sum(1, keepdim=True)


def ref_nested_parallel_deep(t, s):
    x = t["X"].double()
    a = torch.arange(4, device=x.device, dtype=x.dtype)[:, None, None]
    b = torch.arange(8, device=x.device, dtype=x.dtype)[None, :, None]
    c = torch.arange(32, device=x.device, dtype=x.dtype)[None, None, :]
    return torch.where(b % 2 == 0, x + a + b, x * (b + 1) + c)


def ref_i32_fragment(t, s):
    x = t["X"].to(torch.int64)
    return (x + 2**24) | (x & 3)


def ref_i32_reduce(t, s):
    return t["X"].to(torch.int64).sum(dim=0)


def ref_minmax_neg(t, s):
    x, a, b = (t[n].to(torch.int64) for n in "XAB")
    hi = torch.maximum(torch.maximum(-x, a), b)
    lo = torch.minimum(torch.minimum(-x, a), b)
    return hi + lo * 16


def ref_byte_stores(t, s):
    """The last iteration's t and u (tests/gpu_regress/byte_stores.c)."""
    M, c, sel = s["M"], s["K"] - 1, s["sel"]
    dev = t["Y"].device
    m = torch.arange(M, device=dev)
    b0, i = m // 2, m % 2
    sv = torch.where(b0 < c, torch.full_like(m, c), torch.minimum(i, b0))
    j = torch.arange(2, device=dev)[None, :, None].expand(M, 2, 4)
    l0 = (torch.arange(4, device=dev) == 0)[None, None, :]
    pick = l0 & ((sel < b0) & (sv != 3))[:, None, None]
    return torch.where(pick, torch.full_like(j, sel), j), torch.full((M, 2, 4), c, device=dev)


def ref_min_of_compare(t, s):
    """tests/gpu_regress/min_of_compare.c: b the block, i the lane."""
    x = t["X"].to(torch.int64)
    n = torch.arange(x.numel(), device=x.device)
    b, i = n // 128, n % 128
    lo = torch.minimum(x, (b >= 1).to(torch.int64)) & 3
    hi = torch.maximum((x < 3).to(torch.int64), (i > 60).to(torch.int64)) ^ (x == 0).to(torch.int64)
    p = torch.maximum(-x, (x > 5).to(torch.int64)) | 8
    return lo + hi * 4 + p * 16


def ref_small_block_sum(t, s):
    return t["X"].double().sum(dim=1)


def ref_small_block_max(t, s):
    return t["I"].max(dim=1).values


def ref_f64_fragment(t, s):
    x = t["X"].double()
    return (x * x / 3.0).sum(dim=1)


def ref_batched_strided_gemm(t, s):
    return torch.einsum("bmhk,bkn->bmhn", t["A"].double(), t["B"].double())


def ref_neg_origin_pipelined(t, s):
    return shifted(t["A"].double(), s["r0"]) @ t["B"].double()


def ref_tma_origin_column(t, s):
    """C = A'^T B, A' A shifted c0 columns along M (zeros outside)."""
    return shifted(t["A"].double().t(), s["c0"]) @ t["B"].double()


def ref_reg_prefetch_pipelined(t, s):
    """Y[i][j] = sum of X[i][c] over the columns c = j (mod 64)."""
    x = t["X"].double()
    pad = (-s["N"]) % 64
    x = torch.nn.functional.pad(x, (0, pad))
    return x.reshape(s["M"], -1, 64).sum(dim=1)


def ref_stored_prefetch(t, s):
    """Y[i] = sum over j of X[i][j] * W[i][j] (X f16, W bf16)."""
    return (t["X"].double() * t["W"].double()).sum(dim=1)


def ref_table_sum(t, s):
    """Y[b] = the sum of the 16-row pages T[b][p] of X, p < min(CNT[b], MAXP)
    (rows past R read as 0)."""
    x = torch.nn.functional.pad(t["X"].double(), (0, 0, 0, (-s["R"]) % 16 + 16))
    y = torch.zeros(s["B"], 16, 64, dtype=torch.float64, device=x.device)
    for b in range(s["B"]):
        for p in range(min(int(t["CNT"][b]), s["MAXP"])):
            r = int(t["T"][b][p]) * 16
            y[b] += x[r:r + 16]
    return y


def ref_halves(t, s):
    """Y[t][h] = (X[t][h][64:] * 2, X[t][h][:64] - 1)."""
    x = t["X"].double()
    return torch.cat((x[..., 64:] * 2, x[..., :64] - 1), dim=-1)


def ref_overlap(t, s):
    """Y = 3 X: each column's last store is the 3 X of its own tile."""
    return t["X"].double() * 3


# The programs of tests/lang/, as their opening comments state.

def lang_steps(s, x):
    """rounding.c's and quantize.c's values: x, half steps where n % 4 is
    1 and (rounding.c) quarter steps where it is 3."""
    n = torch.arange(s["N"], device=x.device, dtype=torch.float64)
    half = (n - s["N"] // 2) * 0.5
    return n, torch.where(n % 4 == 1, half, x)


def ref_lang_rintf(t, s):
    n, v = lang_steps(s, t["X"].double() * 8)
    v = torch.where(n % 4 == 3, (n - s["N"] // 2) * 0.25, v)
    return torch.round(v)             # ties to even


def ref_lang_roundf(t, s):
    n, v = lang_steps(s, t["X"].double() * 8)
    v = torch.where(n % 4 == 3, (n - s["N"] // 2) * 0.25, v)
    return torch.sign(v) * torch.floor(v.abs() + 0.5)   # ties away from 0


def ref_lang_abs(t, s):
    n = torch.arange(s["N"], device=t["K"].device, dtype=torch.int64)
    return (t["K"].to(torch.int64) * 1000 + n - s["N"] // 2).abs()


def ref_lang_sat_i32(t, s):
    x = t["X"].float()
    n, v = lang_steps(s, x.double())
    v = torch.where(n % 16 == 3, float("nan"), v)
    v = torch.where(n % 16 == 7, (x * float("inf")).double(), v)
    v = (v.float() * 16777216.0).double()
    r = torch.round(v).clamp(-2**31, 2**31 - 1)
    return torch.where(torch.isnan(v), 0.0, r)


def lang_masked(t, every, nan_rows):
    """argmax.c's and topk.c's tile: X truncated to integers, NaN where
    (row + col) % every == 5 or 4, and in row 2 of each block of 16."""
    x = torch.trunc(t["X"].double())
    r = torch.arange(x.shape[0], device=x.device)[:, None]
    c = torch.arange(x.shape[1], device=x.device)[None, :]
    mask = (r + c) % every == (5 if every == 13 else 4)
    if nan_rows:
        mask = mask | (r % 16 == 2)
    return torch.where(mask, float("nan"), x)


def ref_lang_argmax(t, s):
    x = lang_masked(t, 13, True)
    return torch.where(torch.isnan(x), float("-inf"), x).argmax(dim=1)


def ref_lang_topk(t, s):
    x = lang_masked(t, 11, False)
    key = torch.where(torch.isnan(x), float("-inf"), x)
    return torch.sort(key, dim=1, descending=True, stable=True).indices[:, :5]


def ref_lang_reduce_all_threads(t, s):
    x = t["X"].to(torch.int64)
    n = s["N"]
    pad = torch.zeros(-(-n // 200) * 200, dtype=torch.int64, device=x.device)
    pad[:n] = x
    sums = pad.view(-1, 200).sum(dim=1).repeat_interleave(200)[:n]
    return sums + x


# Ragged copies and run-time extents (tests/lang/embedding.c, paged_kv.c,
# moe_group.c, masked.c).  NaN in these references marks an element the
# kernel must leave alone (UNTOUCHED below): it keeps the poison.

def ref_lang_embedding(t, s):
    ids, W = t["ids"].long(), t["W"].double()
    inside = (ids >= 0) & (ids < s["V"])
    rows = W[ids.clamp(0, s["V"] - 1)]
    return torch.where(inside[:, None], rows, torch.zeros_like(rows))


def ref_lang_paged_kv(t, s):
    q, K = t["Q"].double(), t["K"].double()          # [B][H][D], [NPAGES*PAGE][H][D]
    table, lens = t["table"].long(), t["lens"].long()
    page_len, nslot, maxp = s["PAGE"], s["NPAGES"] * s["PAGE"], table.shape[1]
    pos = torch.arange(s["S"], device=q.device)
    p = pos // page_len
    # A page past the table reads as page 0 (a tile_copy past the edge).
    page = torch.where((p < maxp)[None, :], table[:, p.clamp(max=maxp - 1)],
                       torch.zeros_like(table[:, :1]))
    slot = page * page_len + pos % page_len                   # [B][S]
    inside = (slot >= 0) & (slot < nslot)
    k = K[slot.clamp(0, nslot - 1)]                           # [B][S][H][D]
    k = torch.where(inside[:, :, None, None], k, torch.zeros_like(k))
    sc = torch.einsum("bhd,bshd->bhs", q, k) * 0.125
    keep = pos[None, :] < lens[:, None]
    return torch.where(keep[:, None, :], sc, torch.full_like(sc, float("nan")))


def ref_lang_moe_group(t, s):
    X, W = t["X"].double(), t["W"].double()
    Y = torch.full((s["T"], s["N"]), float("nan"), dtype=torch.float64, device=X.device)
    first = 0
    for e, c in enumerate(t["counts"].long().tolist()):
        Y[first:first + c] = X[first:first + c] @ W[e]
        first += c
    return Y


def lang_masked_x(t):
    keep = t["keep"] != 0
    x = t["X"].double()
    return torch.where(keep, x, torch.zeros_like(x)) * 2 + 1, keep


def ref_lang_masked_y(t, s):
    x, keep = lang_masked_x(t)
    return torch.where(keep, x, torch.full_like(x, float("nan")))


def ref_lang_masked_z(t, s):
    x, _ = lang_masked_x(t)
    return torch.where((t["G"] > 0)[:, None], x, torch.full_like(x, float("nan")))


def ref_lang_masked_p(t, s):
    x, _ = lang_masked_x(t)
    r = torch.arange(s["T"], device=x.device)
    P = torch.empty_like(x)
    P[(r * 5 + 3) % s["T"]] = x
    return P


# The held-out style kernels of tests/kernels/, each against torch.

def ref_k_layernorm_bwd(t, s):
    x, dy = t["X"].double(), t["dY"].double()
    mu, rs = t["mean"].double()[:, None], t["rstd"].double()[:, None]
    g = t["gamma"].double() * dy
    xhat = (x - mu) * rs
    return rs * (g - g.mean(1, keepdim=True) - xhat * (g * xhat).mean(1, keepdim=True))


def ref_k_softmax_bwd(t, s):
    y, dy = t["Y"].double(), t["dY"].double()
    return y * (dy - (dy * y).sum(1, keepdim=True))


def ref_k_swiglu_gemm(t, s):
    x = t["X"].double()
    g, u = x @ t["Wg"].double().T, x @ t["Wu"].double().T
    return torch.nn.functional.silu(g) * u


def ref_k_gemm_bias_gelu(t, s):
    v = t["A"].double() @ t["W"].double().T + t["bias"].double()
    return torch.nn.functional.gelu(v)


def ref_k_quant_i8_token(t, s):
    x = t["X"].float()
    amax = x.abs().amax(1)
    m = torch.where(amax > 0, amax, torch.full_like(amax, 127.0))
    inv = 127.0 / m
    q = torch.round(x * inv[:, None]).clamp(-128, 127).to(torch.int8)
    return q, m / 127.0


def ref_k_fp8_quant_amax(t, s):
    x = t["X"].float()
    q = (x * t["scale"].float()[0]).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    bm, bn = 16, 256       # the kernel's BLOCK_M, BLOCK_N
    M, N = x.shape
    pad = torch.zeros(-(-M // bm) * bm, -(-N // bn) * bn, device=x.device)
    pad[:M, :N] = x.abs()
    amax = pad.view(pad.shape[0] // bm, bm, pad.shape[1] // bn, bn).amax(dim=(1, 3))
    return q.double(), amax


def ref_k_groupnorm(t, s):
    x = t["X"].double()
    mu = x.mean(2, keepdim=True)
    var = (x * x).mean(2, keepdim=True) - mu * mu
    y = (x - mu) / torch.sqrt(var + 1e-5)
    ch = (torch.arange(s["G"], device=x.device)[:, None] * s["CPG"] +
          torch.arange(s["CPG"] * s["HW"], device=x.device)[None, :] // s["HW"])
    return y * t["gamma"].double()[ch] + t["beta"].double()[ch]


def ref_k_row_cumsum(t, s):
    return t["X"].to(torch.int64).cumsum(1)


def ref_k_histogram(t, s):
    x = t["X"].long()
    ok = (x >= 0) & (x < s["NB"])
    return t["H@start"].long() + torch.bincount(x[ok], minlength=s["NB"])


def ref_k_batched_gemm(t, s):
    return torch.bmm(t["A"].double(), t["B"].double())


def ref_k_causal_conv1d(t, s):
    x = t["X"].double().permute(0, 2, 1)              # [B][C][T]
    w = t["W"].double()                                # [C][KW]
    x = torch.nn.functional.pad(x, (w.shape[1] - 1, 0))
    y = torch.nn.functional.conv1d(x, w[:, None, :], t["bias"].double(), groups=w.shape[0])
    return torch.nn.functional.silu(y).permute(0, 2, 1)


def ref_k_embedding_bag(t, s):
    ids, W = t["ids"].long(), t["W"].double()
    ok = (ids >= 0) & (ids < s["V"])
    rows = torch.where(ok[..., None], W[ids.clamp(0, s["V"] - 1)], 0.0)
    return (t["psw"].double()[..., None] * rows).sum(1)


def ref_k_kv_append(t, s):
    kc = torch.full(t["Kc"].shape, float("nan"), dtype=torch.float64, device=t["Kc"].device)
    kn = t["Knew"].double()
    for b, (p, n) in enumerate(zip(t["pos"].tolist(), t["nnew"].tolist())):
        n = max(0, min(n, s["MAXS"] - p))
        kc[b, p:p + n] = kn[b, :n]
    return kc


def ref_k_rmsnorm_bwd(t, s):
    x, dy, g = t["X"].double(), t["dY"].double(), t["gamma"].double()
    r = t["rstd"].double()[:, None]
    dot = (g * dy * x).sum(1, keepdim=True)
    dx = r * g * dy - x * r ** 3 * dot / s["N"]
    return dx, t["dG@start"].double() + (dy * x * r).sum(0)


def ref_k_logsumexp(t, s):
    return torch.logsumexp(t["X"].double(), 1)


def ref_k_swa_attention(t, s):
    q, k, v = t["Q"].double(), t["K"].double(), t["V"].double()
    S, win, cap = s["S"], s["WIN"], 30.0
    x = q @ k.transpose(-1, -2) * 0.125
    pos = torch.arange(S, device=q.device)
    dist = (pos[:, None] - pos[None, :]).double()
    x = cap * torch.tanh(x / cap) - t["slopes"].double()[None, :, None, None] * dist
    keep = (dist >= 0) & (dist < win)
    x = torch.where(keep, x, float("-inf"))
    return torch.softmax(x, -1) @ v


def ref_k_alibi_cross(t, s):
    q, k, v = (t[n].double().permute(0, 2, 1, 3) for n in ("Q", "K", "V"))
    S, T, H = s["S"], s["T"], s["H"]
    x = q @ k.transpose(-1, -2) * s["scale"]
    r = torch.arange(S, device=q.device)[:, None] + (T - S)
    c = torch.arange(T, device=q.device)[None, :]
    slope = torch.exp2(-8.0 * torch.arange(1, H + 1, device=q.device, dtype=torch.float64) / H)
    x = x + slope[None, :, None, None] * (c - r).double()
    x = torch.where(c <= r, x, float("-inf"))
    lse = torch.logsumexp(x, -1)
    p = torch.exp(x - torch.where(torch.isinf(lse), 0.0, lse)[..., None])
    return (p @ v).permute(0, 2, 1, 3), lse


def ref_k_decode_ragged(t, s):
    q, k, v = t["Q"].double(), t["K"].double(), t["V"].double()
    g, T = s["GROUP"], s["T"]
    k, v = k.repeat_interleave(g, dim=2), v.repeat_interleave(g, dim=2)
    x = torch.einsum("bhd,bthd->bht", q, k) * s["scale"]
    keep = torch.arange(T, device=q.device)[None, None, :] < t["lens"].clamp(max=T)[:, None, None]
    x = torch.where(keep, x, float("-inf"))
    lse = torch.logsumexp(x, -1)
    p = torch.exp(x - torch.where(torch.isinf(lse), 0.0, lse)[..., None])
    return torch.einsum("bht,bthd->bhd", p, v), lse


def ref_k_moe_router(t, s):
    x = t["logits"].float()
    p = torch.softmax(x.double(), 1)
    # ties by the smaller expert id, as tile_reduce_topk
    order = torch.sort(p, dim=1, descending=True, stable=True)
    top, ids = order.values[:, :2], order.indices[:, :2]
    return ids, top / top.sum(1, keepdim=True)


def ref_k_argmax_vocab(t, s):
    return t["X"].argmax(1)


REFS = {"gemm": (ref_gemm, "C"), "gemm_at": (ref_gemm_at, "C"), "gemm_bt": (ref_gemm_bt, "C"),
        "gemm_tn": (ref_gemm_tn, "C"), "softmax": (ref_softmax, "Y"),
        "rmsnorm": (ref_rmsnorm, "Y"), "attention": (None, "O"),
        "bias_gelu": (ref_bias_gelu, "Y"), "colsum": (ref_colsum, "Y"),
        "layernorm": (ref_layernorm, "Y"), "gemm_bias_relu": (ref_gemm_bias_relu, "C"),
        "gemm_splitk": (ref_gemm_splitk, "C"),
        "bool_shared": (ref_bool_shared, "Y"), "bool_tensor": (ref_bool_tensor, "Y"),
        "copy_x": (ref_copy_x, "Y"), "neg_origin_covered": (ref_neg_origin_covered, "Y"),
        "neg_origin_uncovered": (ref_neg_origin_uncovered, "Y"), "neg_origin_store": (ref_neg_origin_store, "Y"),
        "neg_origin_pipelined": (ref_neg_origin_pipelined, "C"),
        "tma_origin_column": (ref_tma_origin_column, "C"),
        "batched_strided_gemm": (ref_batched_strided_gemm, "C"),
        "reg_prefetch_pipelined": (ref_reg_prefetch_pipelined, "Y"),
        "stored_prefetch": (ref_stored_prefetch, "Y"), "table_sum": (ref_table_sum, "Y"),
        "halves": (ref_halves, "Y"), "overlap": (ref_overlap, "Y"),
        "nested_parallel_smem": (ref_nested_parallel_smem, "Y"),
        "nested_parallel_deep": (ref_nested_parallel_deep, "Y"),
        "anchored_inner_loop": (ref_anchored_inner_loop, "Y"),
        "i32_fragment": (ref_i32_fragment, "Y"), "i32_reduce": (ref_i32_reduce, "Y"),
        "f64_fragment": (ref_f64_fragment, "S"), "minmax_neg": (ref_minmax_neg, "Y"),
        "minmax_neg_z": (ref_minmax_neg, "Z"), "byte_stores": (ref_byte_stores, ("Y", "Z")),
        "min_of_compare": (ref_min_of_compare, "Y"),
        "small_block_sum": (ref_small_block_sum, "S"), "small_block_max": (ref_small_block_max, "Q"),
        "lang_rintf": (ref_lang_rintf, "RI"), "lang_roundf": (ref_lang_roundf, "R"),
        "lang_abs": (ref_lang_abs, "A"), "lang_sat_i32": (ref_lang_sat_i32, "Q32"),
        "lang_argmax": (ref_lang_argmax, "RI"), "lang_topk": (ref_lang_topk, "I"),
        "lang_reduce_all_threads": (ref_lang_reduce_all_threads, "S"),
        "lang_embedding": (ref_lang_embedding, "Y"), "lang_paged_kv": (ref_lang_paged_kv, "Sc"),
        "lang_moe_group": (ref_lang_moe_group, "Y"), "lang_masked_y": (ref_lang_masked_y, "Y"),
        "lang_masked_z": (ref_lang_masked_z, "Z"), "lang_masked_p": (ref_lang_masked_p, "P"),
        "add_rmsnorm": (ref_add_rmsnorm, ("H", "Y")), "rope": (ref_rope, "Y"),
        "transpose": (ref_transpose, "Y"), "cross_entropy": (ref_cross_entropy, "Loss"),
        "topk": (ref_topk, ("Wt", "I")),
        "flash_decode_split": (ref_flash_decode_split, ("Opart", "Lse")),
        "flash_decode_combine": (ref_flash_decode_combine, "O"),
        "gqa_attention": (ref_gqa_attention, "O"), "gemm_w8a8": (ref_gemm_w8a8, "C"),
        "gemm_fp8": (ref_gemm_fp8, "C"),
        "paged_decode": (ref_paged_decode, "O"), "paged_decode_full": (ref_paged_decode, "O"),
        "paged_decode_split": (ref_paged_decode_split, ("Opart", "Lse")),
        "paged_decode_split_full": (ref_paged_decode_split, ("Opart", "Lse")),
        "moe_gemm": (ref_moe_gemm, "Y"), "gemm_w4a16": (ref_gemm_w4a16, "C"),
        "gemm_w4a16_splitk": (ref_gemm_w4a16_splitk, "C"),
        "i4_fragment": (ref_i4_fragment, "Y"), "i4_shared": (ref_i4_shared, ("Y", "Z", "W")),
        "i4_store": (ref_i4_store, ("Q", "R")), "i4_pipelined": (ref_i4_pipelined, "Y"),
        "row_vectors": (ref_row_vectors, ("Y", "Z")),
        "conv2d": (ref_conv2d, "Y"), "attn_bwd_delta": (ref_attn_bwd_delta, "Delta"),
        "attn_bwd_dkdv": (lambda t, s: ref_attn_bwd(t, s, ("dK", "dV")), ("dK", "dV")),
        "attn_bwd_dq": (lambda t, s: ref_attn_bwd(t, s, ("dQ",)), ("dQ",)),
        "k_layernorm_bwd": (ref_k_layernorm_bwd, "dX"), "k_softmax_bwd": (ref_k_softmax_bwd, "dX"),
        "k_swiglu_gemm": (ref_k_swiglu_gemm, "H"), "k_gemm_bias_gelu": (ref_k_gemm_bias_gelu, "Y"),
        "k_quant_i8_token": (ref_k_quant_i8_token, ("Q", "S")),
        "k_fp8_quant_amax": (ref_k_fp8_quant_amax, ("Q", "Amax")),
        "k_groupnorm": (ref_k_groupnorm, "Y"), "k_row_cumsum": (ref_k_row_cumsum, "Y"),
        "k_histogram": (ref_k_histogram, "H"), "k_batched_gemm": (ref_k_batched_gemm, "C"),
        "k_causal_conv1d": (ref_k_causal_conv1d, "Y"), "k_embedding_bag": (ref_k_embedding_bag, "Y"),
        "k_kv_append": (ref_k_kv_append, "Kc"), "k_rmsnorm_bwd": (ref_k_rmsnorm_bwd, ("dX", "dG")),
        "k_logsumexp": (ref_k_logsumexp, "Y"), "k_swa_attention": (ref_k_swa_attention, "O"),
        "k_moe_router": (ref_k_moe_router, ("ids", "weights")), "k_argmax_vocab": (ref_k_argmax_vocab, "Y"),
        "k_alibi_cross": (ref_k_alibi_cross, ("O", "LSE")), "k_decode_ragged": (ref_k_decode_ragged, ("O", "LSE"))}
# References whose NaN elements the kernel must not write (they keep the
# poison): each is counted as `stray` if written, `unwritten` the other way.
# Kernels whose f32 outputs are sums of f16-rounded terms, checked at
# this tolerance rather than f32's: flash_decode_split_gqa rounds P to f16 for
# its tensor-core P V, as flash attention does (2^-11 relative per
# probability, about 2e-4 of the largest output measured on the H200);
# gemm_w4a16_splitk rounds each dequantized weight to f16 for its
# tensor-core gemm (1.8-2.1e-4 measured there).
SUM_TOLERANCE = {"flash_decode_split_gqa": 1e-3, "paged_decode_split_gqa": 1e-3,
                 "gemm_w4a16_splitk": 1e-3}
UNTOUCHED = {"lang_paged_kv", "lang_moe_group", "lang_masked_y", "lang_masked_z", "k_kv_append"}
# Outputs the kernel also reads: they start random, and the reference sees
# their starting values as NAME@start.
INOUT = {"gemm_splitk": ["C"], "gemm_w4a16_splitk": ["C"], "k_histogram": ["H"], "k_rmsnorm_bwd": ["dG"]}
# Inputs a reference needs to hold more than random values: a function
# that rewrites them in place (tensors, shapes, generator), after the rest
# are drawn.
PREPARE = {"moe_gemm": moe_counts, "attn_bwd_dkdv": attn_bwd_inputs, "attn_bwd_dq": attn_bwd_inputs}
# Inputs drawn from [low, high) over the shapes instead: integers that
# index something (labels from -1: a negative label is an ignored row),
# int8 operands over their whole range, quantization scales of the size
# that keeps an fp16 output finite.
I8 = lambda s: (-128, 128)  # noqa: E731
SCALE = lambda s: (0.001, 0.01)  # noqa: E731
RANGES = {"rope": {"P": lambda s: (0, s["MAXPOS"])},
          "cross_entropy": {"L": lambda s: (-1, s["V"])},
          "gemm_w8a8": {"A": I8, "W": I8, "SA": SCALE, "SW": SCALE},
          # e4m3 operands over [-448, 448), as quantized tensors use it.
          "gemm_fp8": {"A": lambda s: (-448, 448), "W": lambda s: (-448, 448), "SA": SCALE, "SW": SCALE},
          # Context lengths from 0 (nothing to attend to) to the table's
          # capacity; _full: every sequence reaches its last page.
          "paged_decode": {"BT": lambda s: (0, s["NPAGES"]), "CL": lambda s: (0, s["MAXP"] * s["PAGE"] + 1)},
          "paged_decode_full": {"BT": lambda s: (0, s["NPAGES"]),
                                "CL": lambda s: ((s["MAXP"] - 1) * s["PAGE"] + 1, s["MAXP"] * s["PAGE"] + 1)}}
RANGES["paged_decode_split"] = RANGES["paged_decode"]
RANGES["paged_decode_split_full"] = RANGES["paged_decode_full"]
# tests/gpu_regress/table_origin_pipelined.c's `run: --range` line.
RANGES["table_sum"] = {"T": lambda s: (0, 19), "CNT": lambda s: (0, s["MAXP"] + 1)}
# tests/gpu_regress/row_vectors.c: ids past both ends of X's rows.
RANGES["row_vectors"] = {"ids": lambda s: (-2, s["V"] + 2)}
# The ragged-copy programs of tests/lang (their `run: --range` lines).
RANGES.update({
    "lang_embedding": {"ids": lambda s: (-2, s["V"] + 2)},
    "lang_paged_kv": {"table": lambda s: (-1, s["NPAGES"]), "lens": lambda s: (0, s["S"] + 1)},
    "lang_moe_group": {"counts": lambda s: (0, s["MAXC"] + 1)},
})
for _r in ("lang_masked_y", "lang_masked_z", "lang_masked_p"):
    RANGES[_r] = {"keep": lambda s: (0, 2)}
# tests/kernels/ (their `run: --range` lines): bin ids around the bins,
# bag ids from -1 (padding), cache positions and counts; cumulative sums
# of at most 2^20 by 1000 stay in i32.
RANGES.update({
    "k_histogram": {"X": lambda s: (-2, s["NB"] + 2)},
    "k_embedding_bag": {"ids": lambda s: (-1, s["V"])},
    "k_decode_ragged": {"lens": lambda s: (0, s["T"] + 1)},
    "k_kv_append": {"pos": lambda s: (0, s["MAXS"]), "nnew": lambda s: (0, s["TNEW"] + 1)},
})


def flops_bytes(case, tensors, env):
    ref = case["reference"]
    nbytes = sum(t.numel() * t.element_size() for n, t in tensors.items() if "@" not in n)
    if ref in ("gemm", "gemm_at", "gemm_bt", "gemm_tn", "gemm_bias_relu", "gemm_w8a8", "gemm_w4a16",
               "gemm_w4a16_splitk", "gemm_fp8"):
        return 2.0 * env["M"] * env["N"] * env["K"], nbytes
    if ref in ("attn_bwd_dkdv", "attn_bwd_dq"):
        # dK and dV: 4 gemms of S x S x D (scores, dP, dV, dK); dQ: 3.
        n = 4 if ref == "attn_bwd_dkdv" else 3
        return 2.0 * n * env["B"] * env["H"] * env["S"] ** 2 * case["launch"]["tunables"]["HEAD_DIM"], nbytes
    if ref == "conv2d":
        return 2.0 * env["N"] * env["P"] * env["Q"] * env["KO"] * env["R"] * env["S"] * env["C"], nbytes
    if ref == "moe_gemm":
        return 2.0 * env["T"] * env["N"] * env["K"], nbytes
    if ref in ("attention", "gqa_attention"):
        causal = case["launch"]["tunables"].get("CAUSAL", 0)
        f = 4.0 * env["B"] * env["H"] * env["S"] ** 2 * case["launch"]["tunables"]["HEAD_DIM"]
        return f / (2 if causal else 1), nbytes
    return None, nbytes


def random_input(shape, dt, g, name, span=None, gemm=False):
    """Floats and integers in span [lo, hi) where given, else floats
    uniform in [-1, 1) (norm weights W in [0.5, 2.5)), bools half
    true, integers in [-2^20, 2^20) (past float's 2^24 once added to, and
    summed over up to 2048 rows without overflow; u8 and i8 small and
    non-negative, but i8 gemm operands over all of -128 .. 127: their
    products' signs are what an s8 instruction can get wrong)."""
    if dt == torch.bool:
        return torch.rand(shape, generator=g, device="cuda") < 0.5
    if not dt.is_floating_point:
        lo, hi = (-2**20, 2**20) if dt in (torch.int32, torch.int64) else (0, 100)
        if span:
            lo, hi = span
        elif gemm and dt == torch.int8:
            lo, hi = -128, 128
        return torch.randint(lo, hi, shape, generator=g, device="cuda", dtype=dt)
    t = torch.rand(shape, generator=g, device="cuda", dtype=torch.float32) * 2 - 1
    if span:
        t = span[0] + (t + 1) / 2 * (span[1] - span[0])
    elif name == "W":
        t = t + 1.5  # norm weights away from zero
    return t.to(dt)


def poisoned(shape, dt):
    """An output before the kernel: NaN, or int_poison (bools: false)."""
    if dt == torch.bool:
        return torch.zeros(shape, device="cuda", dtype=dt)
    return torch.full(shape, float("nan") if dt.is_floating_point else int_poison(dt), device="cuda", dtype=dt)


def compare(out, ref, out_name, case, L):
    """(error, unwritten elements, stray elements, ok) of one output
    against its reference: integers exactly (the error is the count of
    wrong elements), floats by the largest difference over the
    reference's largest magnitude, within the launch manifest's tolerance
    against a library (torch here) for the output's dtype (docs/launch.md,
    "tolerance").  For the UNTOUCHED references, elements where the
    reference is NaN must keep the poison (stray: written anyway)."""
    out_dt = [p["dtype"] for p in L["params"] if p["name"] == out_name][0]
    if not out.dtype.is_floating_point:
        # Exactly, every element (the poison included, were it left).
        unwritten = int((out == int_poison(out.dtype)).sum().item()) if out.dtype != torch.bool else 0
        wrong = int((out.to(torch.int64) != ref.to(torch.int64)).sum().item())
        return float(wrong), unwritten, 0, wrong == 0
    out, ref = out.double(), ref.double()
    stray = 0
    if case["reference"] in UNTOUCHED:
        keep = torch.isnan(ref)
        unwritten = int((torch.isnan(out) & ~keep).sum().item())
        stray = int((~torch.isnan(out) & keep).sum().item())
        out = torch.where(keep, 0.0, out)
        ref = torch.where(keep, 0.0, ref)
    elif out_name in INOUT.get(case["reference"], []):
        unwritten = 0
    else:
        unwritten = int(torch.isnan(out).sum().item())
    # Equal infinities (a log-sum-exp of nothing is -inf) differ by 0.
    diff = torch.where(out == ref, 0.0, (out - ref).abs())
    finite = ref[torch.isfinite(ref)]
    den = finite.abs().max().item() if finite.numel() else 0.0
    rel = (diff.max().item() / den if den else diff.max().item()) if ref.numel() else 0.0
    tol = SUM_TOLERANCE.get(L["kernel"], max(L["tolerance"]["library"][out_dt],
                                             L["tolerance"].get("promoted_sums", 0)))
    return rel, unwritten, stray, unwritten == 0 and stray == 0 and rel <= tol and math.isfinite(rel)


def launcher(kern, grid, block, smem, L, env):
    """call(args): launch kern.  A kernel with tensor maps (TMA,
    docs/launch.md) takes them after its parameters, built from the
    tensors at each launch: CuPy cannot pass them, so it goes through the
    driver (launch_manifest.cuda_launch, CuPy's context current)."""
    if not L.get("tensor_maps"):
        return lambda args: kern(grid, block, tuple(args), shared_mem=smem)
    return lambda args: launch_manifest.cuda_launch(
        L, env, kern.kernel.ptr, grid, block, smem, cp.cuda.get_current_stream().ptr, args)


def run_case(case, here, repeat):
    L = case["launch"]
    env = dict(L["tunables"])
    env.update(launch_manifest.device_env(device_sms()))
    env.update(case["shapes"])
    src = open(os.path.join(here, case["cu"])).read()
    arch = L["arch"]
    extra = tuple(os.environ.get("TILEC_NVRTC_EXTRA", "").split())
    smem = L["smem_bytes"]
    grid = tuple(evaluate(g, env) for g in L["grid"])
    block = (L["threads"], 1, 1)
    # Two builds, as the runtime makes them (docs/runtime.md, "Aligned
    # launches"): TILEC_ALIGNED=1 for launches whose tensors allow it,
    # the general one for the others; each compiled when first needed.
    builds = {}

    def build(aligned):
        if aligned not in builds:
            flags = ("-DTILEC_ALIGNED=1",) if aligned else ()
            mod = cp.RawModule(code=src, options=("-std=c++17", f"-arch={arch}") + extra + flags)
            kern = mod.get_function(L["kernel"])
            if smem > 48 * 1024:
                kern.max_dynamic_shared_size_bytes = smem
            builds[aligned] = launcher(kern, grid, block, smem, L, env)
        return builds[aligned]

    def which(tensors):
        if os.environ.get("TILEC_GENERAL_BUILD"):
            return False  # the general build for every launch, to compare
        ptrs = {p["name"]: tensors[p["name"]].data_ptr() for p in L["params"] if p["kind"] == "tensor"}
        return launch_manifest.aligned(L, env, ptrs)

    def launch_with(tensors):
        return build(which(tensors))

    def make_args(seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        tensors, args = {}, []
        for p in L["params"]:
            if p["kind"] == "scalar":
                v = env[p["name"]]
                args.append(SCALAR[p["ctype"]](v))
                continue
            shape = [evaluate(e, env) for e in p["shape"]]
            dt = DT[p["dtype"]]
            i4 = p["dtype"] == "i4"
            if i4:  # every byte value: every pair of -8 .. 7
                shape = [(math.prod(shape) + 1) // 2]
            inout = p["name"] in INOUT.get(case["reference"], [])
            if p["const"] or inout:
                span = RANGES.get(case["reference"], {}).get(p["name"])
                t = random_input(shape, dt, g, p["name"], (0, 256) if i4 else span(env) if span else None,
                                 case["reference"].startswith("gemm"))
                if inout:
                    tensors[p["name"] + "@start"] = t.clone()
            else:
                t = poisoned(shape, dt)
            tensors[p["name"]] = t
            # bool and fp8 tensors as their bytes (CuPy takes neither).
            raw = dt == torch.bool or dt in (torch.float8_e4m3fn, torch.float8_e5m2)
            args.append(cp.from_dlpack(t.view(torch.uint8) if raw else t))
        if case["reference"] in PREPARE:
            PREPARE[case["reference"]](tensors, env, g)
        return tensors, args

    tensors, args = make_args(1234)
    launch = launch_with(tensors)
    launch(args)
    torch.cuda.synchronize()
    ref_fn, out_names = REFS[case["reference"]]
    if case["reference"] == "attention":
        refs = ref_attention(tensors, env, L["tunables"].get("CAUSAL", 0))
    else:
        refs = ref_fn(tensors, env)
    if isinstance(out_names, str):
        out_names, refs = (out_names,), (refs,)
    rel, unwritten, stray, ok = 0.0, 0, 0, True
    for out_name, ref in zip(out_names, refs):
        out = tensors[out_name]
        if [p["dtype"] for p in L["params"] if p["name"] == out_name] == ["i4"]:
            out = unpack_i4(out, ref.shape)
        r, u, st, good = compare(out, ref, out_name, case, L)
        rel, unwritten, stray, ok = max(rel, r), unwritten + u, stray + st, ok and good
    result = {"case": case["name"], "grid": grid, "threads": block[0], "smem": smem,
              "rel_err": float(f"{rel:.3g}"), "unwritten": unwritten, "ok": ok,
              "build": "aligned" if which(tensors) else "general"}
    if stray:
        result["stray"] = stray
    if case["kind"] == "bench" and ok:
        sets = [make_args(100 + i) for i in range(3)]
        for t, a in sets:
            assert launch_with(t) is launch, "a bench case's inputs change its build"
            launch(a)
        torch.cuda.synchronize()
        # A plain GEMM is also timed against torch.matmul (cuBLAS) on the
        # same inputs, launches alternating, so both see the same clocks
        # and temperature: the GPU drifts by up to 10% between cases.
        paired = case["reference"] == "gemm"
        # Attention likewise against cuDNN's SDPA (the anchor) on
        # the same Q, K, V, laid out [B][H][S][D] once, outside the timing.
        sdpa = None
        if case["reference"] == "attention":
            sdpa = attention_anchor(sets, L["tunables"].get("CAUSAL", 0))
        elif case["reference"] == "gqa_attention":
            sdpa = attention_anchor(sets, L["tunables"].get("CAUSAL", 0), gqa=True)
        times, lib = [], []
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for i in range(repeat):
            t, a = sets[i % len(sets)]
            start.record()
            launch(a)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
            if paired:
                start.record()
                torch.matmul(t["A"], t["B"], out=t["C"])
                end.record()
                end.synchronize()
                lib.append(start.elapsed_time(end))
            elif sdpa:
                start.record()
                sdpa[i % len(sets)]()
                end.record()
                end.synchronize()
                lib.append(start.elapsed_time(end))
        times.sort()
        ms = times[len(times) // 2]
        if paired:
            lib.sort()
            result["cublas_ms"] = round(lib[len(lib) // 2], 4)
            result["vs_cublas"] = round(lib[len(lib) // 2] / ms, 3)
        elif sdpa:
            lib.sort()
            key = "sdpa" if case["reference"] == "gqa_attention" else "cudnn"
            result[key + "_ms"] = round(lib[len(lib) // 2], 4)
            result["vs_" + key] = round(lib[len(lib) // 2] / ms, 3)
        fl, nb = flops_bytes(case, tensors, env)
        result["ms"] = round(ms, 4)
        if fl:
            result["tflops"] = round(fl / ms / 1e9, 1)
        result["gbps"] = round(nb / ms / 1e6, 1)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--only")
    ap.add_argument("--repeat", type=int, default=30)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(a.cases))
    cases = json.load(open(a.cases))
    results = []
    for case in cases:
        if a.only and not any(case["name"] == o[1:] if o.startswith("=") else o in case["name"]
                              for o in a.only.split(",")):
            continue
        t0 = time.time()
        try:
            r = run_case(case, here, a.repeat)
        except Exception as e:  # report and go on: one broken case is data
            r = {"case": case["name"], "ok": False, "error": f"{type(e).__name__}: {e}"[:400]}
        r["wall_s"] = round(time.time() - t0, 1)
        results.append(r)
        print(json.dumps(r), flush=True)
    print()
    print(f"{'case':34} {'ok':4} {'rel_err':>9} {'ms':>9} {'TFLOP/s':>8} {'GB/s':>8} {'vs lib':>9}")
    for r in results:
        print(f"{r['case']:34} {'yes' if r['ok'] else 'NO':4} {r.get('rel_err', '-')!s:>9} "
              f"{r.get('ms', '-')!s:>9} {r.get('tflops', '-')!s:>8} {r.get('gbps', '-')!s:>8} "
              f"{r.get('vs_cublas', r.get('vs_cudnn', r.get('vs_sdpa', '-')))!s:>9}")
    bad = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(bad)} passed, {len(bad)} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
