"""The GPU test and benchmark cases: which tile program, which tunables,
which shapes, checked against which reference.

Shared by tools/gpu_prepare.sh (on the development machine, which has the
translator) and tools/gpu/run.py (on the GPU machine, which has torch).
`variant` rewrites a sample's element type to make a program the samples do
not contain (f16 -> bf16, f32 -> f16): the translator sees it fresh.
"""

GEMM_AT = ("const f16 A[M][K]", "const f16 A[K][M]", "As[BLOCK_M][BLOCK_K]", "As[BLOCK_K][BLOCK_M]",
           "&A[by * BLOCK_M][k * BLOCK_K]", "&A[k * BLOCK_K][by * BLOCK_M]",
           "tile_gemm(acc, As, Bs)", "tile_gemm(acc, As, Bs, TILE_TRANS_A)")
T256 = ("tile_threads(128)", "tile_threads(256)")
# W4A16 zero points in f16 (the f32 dequantization) or in i4 (the half
# pairs, passes/half_pairs.c): the two samples rewritten each way.
W4_F16Z = ("const i4 Z[K / GROUP][N]", "const f16 Z[K / GROUP][N]",
           "tile_shared i4 zero[BLOCK_N]", "tile_shared f16 zero[BLOCK_N]")
W4_I4Z = tuple(W4_F16Z[i ^ 1] for i in range(len(W4_F16Z)))
# The split-k sample with i8 weights (W8A16), i4 zero points.
W8 = ("const i4 W[N][K]", "const i8 W[N][K]", "tile_shared i4 Ws4[", "tile_shared i8 Ws4[")
GEMM_BT = ("const f16 B[K][N]", "const f16 B[N][K]", "Bs[BLOCK_K][BLOCK_N]", "Bs[BLOCK_N][BLOCK_K]",
           "&B[k * BLOCK_K][bx * BLOCK_N]", "&B[bx * BLOCK_N][k * BLOCK_K]",
           "tile_gemm(acc, As, Bs)", "tile_gemm(acc, As, Bs, TILE_TRANS_B)")



def source(sample):
    """The tile program of a case's sample, a path from the source root,
    and the kernel to translate (None: the file's only one).  A sample is
    a name in samples/ or, with a '/', a path without .c; `:KERNEL` after
    it picks one kernel of a file that holds several."""
    path, _, kernel = sample.partition(":")
    return (f"{path}.c" if "/" in path else f"samples/{path}.c"), kernel or None


# Translator flags of some cases (all others: none).  On sm_90a the
# gemms of these take wgmma by default (fp8 ones with their sums promoted
# per gemm, checked at the manifest's "promoted_sums"); each also runs as
# a `_mma` twin translated with --no-wgmma (mma.sync), checked and timed
# beside it in the same run.
WGMMA_CASES = ["gemm_f16_ragged", "gemm_bf16_ragged", "gemm_f16_ragged_fast", "gemm_bf16_ragged_fast",
               "gemm_f16_at_ragged", "gemm_bf16_bt_ragged", "gemm_f16_at_k64_ragged_fast",
               "gemm_bias_relu_ragged", "conv2d_ragged", "moe_gemm_ragged", "gemm_f16_index64_ragged",
               "gemm_f16_4096", "gemm_f16_8192", "gemm_bf16_8192", "gemm_f16_skinny64",
               "gemm_f16_8192_128x256x64_s3_256t", "gemm_f16_8192_256x128x64_s3_256t",
               "attention_ragged", "attention_causal_ragged", "attention_d64_ragged", "attention_4096",
               "attention_causal_4096", "attention_4096_n128", "gqa_attention_ragged", "gqa_attention_4096",
               "attn_bwd_dq_ragged", "attn_bwd_dq_d128_ragged", "attn_bwd_dq_4096",
               "flash_decode_split_ragged", "paged_decode_ragged",
               "gemm_w8a8_ragged", "gemm_w8a8_fast_ragged", "gemm_w8a8_4096", "gemm_i8_nt_ragged",
               "gemm_i8_nt_ragged_fast", "gemm_i8_nt_128x256x128", "gemm_fp8_nt_ragged",
               "gemm_fp8e5m2_nt_ragged", "gemm_fp8_nt_4096", "gemm_fp8_nt_8192",
               "gemm_fp8_nt_4096_128x128", "gemm_fp8_nt_8192_128x128", "gemm_fp8_nt_k4096_ragged",
               "gemm_fp8_ragged", "gemm_fp8_ragged_fast", "gemm_fp8_4096", "gemm_fp8_8192",

               "gemm_f16_8192_128x256x64_s4_256t", "gemm_f16_8192_128x128x64_s3_128t",
               "gemm_f16_8192_256x128x32_s4_256t", "attention_4096_s3",
               "attention_n32_ragged", "attention_n32_4096", "gemm_f16_64x64x32_s3_fast",
               "gemm_f16_64x64x32_s2_fast", "gemm_f16_64x64x32_s3_8192", "gemm_f16_64x64x64_s3_fast",
               "gemm_f16_64x128x32_s3_fast", "gemm_f16_64x64x32_s3_wide", "gemm_f16_64x64x32_s3_deep"]
# The fp8 test program's cases take no TMA twins (the sample's do).
FP8_NT_CASES = [n for n in WGMMA_CASES if n.startswith("gemm_fp8_nt") or n.startswith("gemm_fp8e5m2_nt")]
FLAGS = {f"{name}_mma": ["--no-wgmma"] for name in WGMMA_CASES}
# The `_tma` twins: the same with --tma, the mbarrier loop's copies by
# TMA (tensor maps built by run.py); ragged `_fast` shapes (16-byte rows)
# are the ones whose fast loop runs, and a negative origin checks the
# hardware's zero fill before the tensor.
TMA_CASES = [n for n in WGMMA_CASES if n not in FP8_NT_CASES] + [
    "gemm_f16_64x64_fast", "gemm_f16_at_ragged_fast", "gemm_bf16_bt_ragged_fast",
    "gemm_bias_relu_ragged_fast", "regress_dup_copy_pipelined_fast", "regress_neg_origin_pipelined_fast",
    "regress_batched_strided_gemm", "regress_batched_strided_gemm_fast", "gemm_i8_4096_64x64x64_s3_128t"]
FLAGS.update({f"{name}_tma": ["--tma"] for name in TMA_CASES})
MMA_TMA_CASES = ["gemm_f16_ragged_fast", "gemm_f16_4096", "regress_neg_origin_pipelined_fast"]

FLAGS.update({f"{name}_mma_tma": ["--no-wgmma", "--tma"] for name in MMA_TMA_CASES})
# The dequantizing gemms with integer zero points (W4_I4Z and the split-k
# sample's own) dequantize in half pairs by default; their `_f32` twins,
# with --no-half-pairs, one element at a time in f32, timed beside them.
PAIRS_CASES = ["gemm_w4a16_splitk_ragged", "gemm_w4a16_splitk_m1_8192", "gemm_w4a16_splitk_m16_8192",
               "gemm_w4a16_splitk_m16_8192_s8", "gemm_w4a16_splitk_bf16_m16_8192", "gemm_w8a16_splitk_m16_8192",
               "gemm_w4a16_i4z_m16_8192_n64_k128"]
FLAGS.update({f"{name}_f32": ["--no-half-pairs"] for name in PAIRS_CASES})
# The `_plans` twins: the same with --copy-plans, the ordinary pipelined
# loop's copies set up once (G2S); ragged checks of each copy form (i4
# weights, one-row scales, padded f32 tiles, 4-D attention sources) and
# the benches they should speed up.
PLANS_CASES = ["gemm_w4a16_splitk_ragged", "gemm_w4a16_splitk_s4_ragged", "gemm_w4a16_ragged",
               "gemm_w4a16_m64_ragged", "gemm_w8a16_splitk_ragged", "gemm_w4a16_splitk_bf16_ragged",
               "gemm_w4a16_i4z_ragged", "gemm_w4a16_splitk_m16_8192", "gemm_w4a16_splitk_m1_8192",
               "gemm_w4a16_m16_8192_n64_k128", "gemm_w8a16_splitk_m16_8192", "attention_4096",
               "attention_causal_4096", "gqa_attention_4096", "flash_decode_gqa_b32_4096",
               "gemm_f32_ragged", "attention_ragged", "attention_causal_ragged", "attention_d64_ragged",
               "attention_t256_bf16_ragged", "flash_decode_split_ragged", "flash_decode_gqa_ragged",
               "gqa_attention_ragged", "attn_bwd_dkdv_ragged", "attn_bwd_dq_ragged", "regress_gemm_f32_k1"]
FLAGS.update({f"{name}_plans": ["--copy-plans"] for name in PLANS_CASES})
# The `_ws` twins: the same with --tma --warp-specialize, the mbarrier
# loop's TMA copies issued by a producer warpgroup the compiler adds
# (launched with 128 more threads: the launch document says so).  The
# ragged shapes whose rows are not 16-byte vectors run the consumers'
# cp.async fallback beside the idle producer; the `_fast` ones, the
# producer; the 8192^3 tilings are timed beside their twins without it.
WS_CASES = [n for n in TMA_CASES if "attention" not in n and "attn" not in n and "decode" not in n
            and "conv2d" not in n and "moe" not in n and "index64" not in n] + [
    "gemm_bf16_8192_128x256x64_s3_256t", "gemm_f16_4096_128x256x64_s3_256t", "gemm_f16_8192_256x128x64_s4_256t",
    "gemm_f16_skinny64_s3", "gemm_i8_nt_ragged_fast_s3", "gemm_bias_relu_ragged_fast_s3"]
FLAGS.update({f"{name}_ws": ["--tma", "--warp-specialize"] for name in WS_CASES})

# name: (sample, variant, defines, shapes, reference, kind)
#   kind "check": correctness on ragged shapes; "bench": timed, checked too.
# The fp8 sample's fastest tiling on the H200 (docs/perf-gpu.md).
FP8_FAST = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "STAGES": 4, "THREADS": 256}

CASES = [
    # GEMM, f16 and bf16 in, f32 accumulate.
    ("gemm_f16_ragged", "gemm", None, {}, {"M": 1000, "N": 1030, "K": 700}, "gemm", "check"),
    ("gemm_bf16_ragged", "gemm", ("f16", "bf16"), {}, {"M": 517, "N": 300, "K": 333}, "gemm", "check"),
    ("gemm_f16_64x64", "gemm", None, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "STAGES": 2},
     {"M": 333, "N": 250, "K": 190}, "gemm", "check"),
    # Transposed operands: A stored K x M, B stored N x K (the program
    # rewritten, checked against A^T B and A B^T).
    ("gemm_f16_at_ragged", "gemm", GEMM_AT, {}, {"M": 300, "N": 260, "K": 200}, "gemm_at", "check"),
    ("gemm_bf16_bt_ragged", "gemm", GEMM_BT + ("f16", "bf16"), {"BLOCK_K": 64}, {"M": 270, "N": 330, "K": 190},
     "gemm_bt", "check"),
    ("gemm_f16_at_k64_ragged", "gemm", GEMM_AT, {"BLOCK_K": 64, "THREADS": 256}, {"M": 200, "N": 300, "K": 333},
     "gemm_at", "check"),
    # The same kernels where every tile is whole 16-byte vectors (the
    # dims multiples of 8, still ragged against the tiles): the fast k
    # loop with the copies issued inside the gemm (tilec::G2S); the
    # shapes above, with a dim that is not, run the loop it falls back to.
    ("gemm_f16_ragged_fast", "gemm", None, {}, {"M": 1000, "N": 1032, "K": 712}, "gemm", "check"),
    ("gemm_bf16_ragged_fast", "gemm", ("f16", "bf16"), {}, {"M": 520, "N": 296, "K": 336}, "gemm", "check"),
    # One warpgroup's 64-row tiles, 32-deep k-steps (64-byte rows of A):
    # the tuning search's smallest wgmma tilings, through the fast loop.
    ("gemm_f16_64x64x32_s3_fast", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 1000, "N": 1032, "K": 712}, "gemm", "check"),
    ("gemm_f16_64x64x32_s2_fast", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 2, "THREADS": 128},
     {"M": 1000, "N": 1032, "K": 712}, "gemm", "check"),
    ("gemm_f16_64x64x64_s3_fast", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "STAGES": 3, "THREADS": 128},
     {"M": 1000, "N": 1032, "K": 712}, "gemm", "check"),
    ("gemm_f16_64x128x32_s3_fast", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 1000, "N": 1032, "K": 712}, "gemm", "check"),
    # Its `_tma` twin was 5-8% off before thread 0's arrivals counted the
    # bytes (docs/backend-cuda.md, "TMA"); with the two after it (many
    # blocks per SM, many iterations) it guards that.
    ("gemm_f16_64x64x32_s3_8192", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 8192, "N": 8192, "K": 8192}, "gemm", "check"),
    ("gemm_f16_64x64x32_s3_wide", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 8192, "N": 8192, "K": 712}, "gemm", "check"),
    ("gemm_f16_64x64x32_s3_deep", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 1024, "N": 1024, "K": 8192}, "gemm", "check"),
    ("gemm_f16_64x64_fast", "gemm", None, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "STAGES": 2},
     {"M": 336, "N": 248, "K": 200}, "gemm", "check"),
    ("gemm_f16_at_ragged_fast", "gemm", GEMM_AT, {}, {"M": 304, "N": 264, "K": 200}, "gemm_at", "check"),
    ("gemm_bf16_bt_ragged_fast", "gemm", GEMM_BT + ("f16", "bf16"), {"BLOCK_K": 64}, {"M": 272, "N": 328, "K": 200},
     "gemm_bt", "check"),
    ("gemm_f16_at_k64_ragged_fast", "gemm", GEMM_AT, {"BLOCK_K": 64, "THREADS": 256}, {"M": 200, "N": 304, "K": 336},
     "gemm_at", "check"),
    ("gemm_f16_4096", "gemm", None, {}, {"M": 4096, "N": 4096, "K": 4096}, "gemm", "bench"),
    ("gemm_f16_4000", "gemm", None, {}, {"M": 4000, "N": 4000, "K": 4000}, "gemm", "bench"),
    ("gemm_f16_8192", "gemm", None, {}, {"M": 8192, "N": 8192, "K": 8192}, "gemm", "bench"),
    ("gemm_bf16_8192", "gemm", ("f16", "bf16"), {}, {"M": 8192, "N": 8192, "K": 8192}, "gemm", "bench"),
    # Skinny: M = 64 and 16 rows against N = K = 8192.
    ("gemm_f16_skinny64", "gemm", None, {"BLOCK_M": 64, "BLOCK_N": 128, "THREADS": 128},
     {"M": 64, "N": 8192, "K": 8192}, "gemm", "bench"),
    # Tilings for the GPU, each spelled out (the defaults may change):
    # gemm_f16_8192_MxNxK_sS_TT is BLOCK_M x BLOCK_N x BLOCK_K, STAGES,
    # THREADS.
] + [
    (f"gemm_f16_8192_{m}x{n}x{k}_s{st}_{t}t", "gemm", None,
     {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "STAGES": st, "THREADS": t},
     {"M": 8192, "N": 8192, "K": 8192}, "gemm", "bench")
    for m, n, k, st, t in [(128, 256, 64, 3, 256), (128, 256, 64, 4, 256), (128, 256, 32, 4, 256),
                           (256, 128, 64, 3, 256), (256, 128, 32, 4, 256), (128, 128, 64, 3, 128),
                           (128, 128, 32, 4, 128), (128, 128, 64, 3, 256), (256, 128, 64, 4, 256)]
] + [
    # Row-wise kernels.
    ("softmax_f32_ragged", "softmax", None, {}, {"M": 1001, "N": 3000}, "softmax", "check"),
    ("softmax_f16_ragged", "softmax", ("f32 X", "f16 X", "f32 Y", "f16 Y"), {}, {"M": 77, "N": 5000}, "softmax", "check"),
    ("softmax_f16_16384", "softmax", ("f32 X", "f16 X", "f32 Y", "f16 Y"), {}, {"M": 16384, "N": 4096}, "softmax", "bench"),
    ("rmsnorm_f16_ragged", "rmsnorm", None, {}, {"M": 1001, "N": 3001, "eps": 1e-5}, "rmsnorm", "check"),
    ("rmsnorm_f16_16384", "rmsnorm", None, {}, {"M": 16384, "N": 4096, "eps": 1e-5}, "rmsnorm", "bench"),
    ("softmax_f16_16384_t256", "softmax", ("f32 X", "f16 X", "f32 Y", "f16 Y"), {"THREADS": 256},
     {"M": 16384, "N": 4096}, "softmax", "bench"),
    ("softmax_f16_16384_t512", "softmax", ("f32 X", "f16 X", "f32 Y", "f16 Y"), {"THREADS": 512},
     {"M": 16384, "N": 4096}, "softmax", "bench"),
    ("softmax_f16_16384_m4n1024", "softmax", ("f32 X", "f16 X", "f32 Y", "f16 Y"), {"BLOCK_M": 4, "BLOCK_N": 1024},
     {"M": 16384, "N": 4096}, "softmax", "bench"),
    ("softmax_f16_chunks_ragged", "softmax", ("f32 X", "f16 X", "f32 Y", "f16 Y"), {"BLOCK_M": 2, "BLOCK_N": 512},
     {"M": 77, "N": 5000}, "softmax", "check"),
    ("rmsnorm_f16_16384_t256", "rmsnorm", None, {"THREADS": 256}, {"M": 16384, "N": 4096, "eps": 1e-5}, "rmsnorm", "bench"),
    ("rmsnorm_f16_16384_t512", "rmsnorm", None, {"THREADS": 512}, {"M": 16384, "N": 4096, "eps": 1e-5}, "rmsnorm", "bench"),
    ("rmsnorm_f16_16384_m4n1024", "rmsnorm", None, {"BLOCK_M": 4, "BLOCK_N": 1024}, {"M": 16384, "N": 4096, "eps": 1e-5}, "rmsnorm", "bench"),
    ("rmsnorm_f16_chunks_ragged", "rmsnorm", None, {"BLOCK_M": 2, "BLOCK_N": 512}, {"M": 1001, "N": 3001, "eps": 1e-5}, "rmsnorm", "check"),
    # The other samples, on ragged shapes.
    ("bias_gelu_ragged", "bias_gelu", None, {}, {"M": 1000, "N": 3000}, "bias_gelu", "check"),
    ("colsum_ragged", "colsum", None, {}, {"M": 1001, "N": 3001}, "colsum", "check"),
    ("layernorm_ragged", "layernorm", None, {}, {"M": 1001, "N": 3001, "eps": 1e-5}, "layernorm", "check"),
    ("layernorm_f16_16384", "layernorm", None, {}, {"M": 16384, "N": 4096, "eps": 1e-5}, "layernorm", "bench"),
    ("gemm_bias_relu_ragged", "gemm_bias_relu", None, {}, {"M": 1000, "N": 1030, "K": 700}, "gemm_bias_relu", "check"),
    ("gemm_bias_relu_ragged_fast", "gemm_bias_relu", None, {}, {"M": 1000, "N": 1032, "K": 712}, "gemm_bias_relu",
     "check"),
    ("gemm_bias_relu_8192", "gemm_bias_relu", None, {"BLOCK_K": 64}, {"M": 8192, "N": 8192, "K": 8192}, "gemm_bias_relu", "bench"),
    ("gemm_splitk_ragged", "gemm_splitk", None, {}, {"M": 300, "N": 200, "K": 1000}, "gemm_splitk", "check"),
    ("gemm_f32_ragged", "gemm_f32", None, {"BLOCK_M": 64, "BLOCK_N": 64}, {"M": 300, "N": 200, "K": 170}, "gemm", "check"),
    # Attention.
    ("attention_ragged", "flash_attention", None, {}, {"B": 2, "S": 1000, "H": 3}, "attention", "check"),
    ("attention_causal_ragged", "flash_attention", None, {"CAUSAL": 1}, {"B": 2, "S": 777, "H": 3}, "attention", "check"),
    ("attention_d64_ragged", "flash_attention", None, {"HEAD_DIM": 64, "BLOCK_N": 32}, {"B": 1, "S": 300, "H": 5}, "attention", "check"),
    ("attention_4096", "flash_attention", None, {}, {"B": 8, "S": 4096, "H": 16}, "attention", "bench"),
    # The shipped sm_90a record's tiling (BLOCK_N 32): S's 32 columns take
    # wgmma n32 while P V's N-major V asks n64 of its own gemm only.
    ("attention_n32_ragged", "flash_attention", None, {"BLOCK_N": 32}, {"B": 2, "S": 1000, "H": 3},
     "attention", "check"),
    ("attention_n32_4096", "flash_attention", None, {"BLOCK_N": 32}, {"B": 8, "S": 4096, "H": 16},
     "attention", "bench"),
    ("attention_causal_4096", "flash_attention", None, {"CAUSAL": 1}, {"B": 8, "S": 4096, "H": 16}, "attention", "bench"),
    ("attention_4096_n128", "flash_attention", None, {"BLOCK_N": 128}, {"B": 8, "S": 4096, "H": 16}, "attention", "bench"),
    ("attention_4096_s3", "flash_attention", None, {"STAGES": 3}, {"B": 8, "S": 4096, "H": 16}, "attention", "bench"),
    # Two warpgroups of 64 query rows each (256 threads): S, P and O per
    # thread halve, so 128 keys a step fit in registers (0.56x cuDNN on
    # 2026-12-06 against 0.68x for the sample's one warpgroup: both of a
    # block's warpgroups wait at every step's block barriers).
    ("attention_t256_ragged", "flash_attention", T256, {"BLOCK_N": 128}, {"B": 2, "S": 1000, "H": 3},
     "attention", "check"),
    ("attention_t256_causal_ragged", "flash_attention", T256, {"BLOCK_N": 128, "CAUSAL": 1},
     {"B": 2, "S": 777, "H": 3}, "attention", "check"),
    ("attention_t256_bf16_ragged", "flash_attention", ("f16", "bf16") + T256, {"BLOCK_N": 128},
     {"B": 2, "S": 1000, "H": 3}, "attention", "check"),
    ("attention_4096_t256", "flash_attention", T256, {"BLOCK_N": 128}, {"B": 8, "S": 4096, "H": 16},
     "attention", "bench"),
    ("attention_bf16_4096", "flash_attention", ("f16", "bf16"), {}, {"B": 8, "S": 4096, "H": 16},
     "attention", "bench"),
    ("attention_bf16_causal_4096", "flash_attention", ("f16", "bf16"), {"CAUSAL": 1}, {"B": 8, "S": 4096, "H": 16},
     "attention", "bench"),
    ("attention_d64_4096", "flash_attention", None, {"HEAD_DIM": 64}, {"B": 8, "S": 4096, "H": 16},
     "attention", "bench"),
    ("attention_d64_causal_4096", "flash_attention", None, {"HEAD_DIM": 64, "CAUSAL": 1}, {"B": 8, "S": 4096, "H": 16},
     "attention", "bench"),
    # Offsets past 2^31 elements: B is K x N with BLOCK_K * N > INT_MAX, so
    # the fast loop's per-iteration step down B (tilec::G2S's advance) wraps
    # in int (NaN everywhere before src/passes/index_width.c); 7 GB of f16 inputs,
    # the float64 reference about 45 GB.
    ("gemm_f16_index64", "gemm", None, {}, {"M": 72, "N": 33554440, "K": 96}, "gemm", "check"),
    ("gemm_f16_index64_ragged", "gemm", None, {}, {"M": 65, "N": 33554433, "K": 70}, "gemm", "check"),
    # Programs the GPU backends once got wrong (tests/gpu_regress/; a
    # sample name with a '/' is a path from the source root, without .c).
    ("regress_bool_shared", "tests/gpu_regress/bool_shared", None, {}, {"N": 200}, "bool_shared", "check"),
    ("regress_bool_tensor", "tests/gpu_regress/bool_tensor", None, {}, {"N": 300}, "bool_tensor", "check"),
    ("regress_short_shared_row", "tests/gpu_regress/short_shared_row", None, {}, {}, "copy_x", "check"),
    ("regress_dup_copy_pipelined", "tests/gpu_regress/dup_copy_pipelined", None, {}, {"M": 300, "N": 260, "K": 200},
     "gemm", "check"),
    ("regress_dup_copy_pipelined_fast", "tests/gpu_regress/dup_copy_pipelined", None, {},
     {"M": 304, "N": 264, "K": 200}, "gemm", "check"),
    ("regress_reg_prefetch_pipelined", "tests/gpu_regress/reg_prefetch_pipelined", None, {},
     {"M": 70, "N": 150}, "reg_prefetch_pipelined", "check"),
    ("regress_stored_prefetch", "tests/gpu_regress/stored_prefetch", None, {}, {"M": 70, "N": 150},
     "stored_prefetch", "check"),
    ("regress_table_origin_pipelined", "tests/gpu_regress/table_origin_pipelined", None, {},
     {"B": 5, "R": 300, "MAXP": 7}, "table_sum", "check"),
    ("regress_disjoint_stores", "tests/gpu_regress/disjoint_stores", None, {}, {"T": 37, "H": 5}, "halves", "check"),
    ("regress_overlapping_stores", "tests/gpu_regress/overlapping_stores", None, {}, {"M": 37, "N": 200},
     "overlap", "check"),
    ("regress_neg_origin_covered", "tests/gpu_regress/neg_origin_covered", None, {}, {"N": 300},
     "neg_origin_covered", "check"),
    ("regress_neg_origin_uncovered", "tests/gpu_regress/neg_origin_uncovered", None, {},
     {"N": 4, "D": 64, "row": -1}, "neg_origin_uncovered", "check"),
    ("regress_neg_origin_uncovered_past", "tests/gpu_regress/neg_origin_uncovered", None, {},
     {"N": 4, "D": 50, "row": 4}, "neg_origin_uncovered", "check"),
    ("regress_neg_origin_uncovered_in", "tests/gpu_regress/neg_origin_uncovered", None, {},
     {"N": 4, "D": 64, "row": 2}, "neg_origin_uncovered", "check"),
    # Every element of Y covered: rows from -3, columns from -4 (the
    # vector path, 16-byte aligned) and from -3 (element by element).
    ("regress_neg_origin_shared", "tests/gpu_regress/neg_origin_shared", None, {},
     {"M": 40, "N": 28, "r0": -3, "c0": -4}, "copy_x", "check"),
    ("regress_neg_origin_shared_odd", "tests/gpu_regress/neg_origin_shared", None, {},
     {"M": 40, "N": 29, "r0": -3, "c0": -3}, "copy_x", "check"),
    ("regress_neg_origin_store", "tests/gpu_regress/neg_origin_store", None, {}, {"N": 300, "o": -1},
     "neg_origin_store", "check"),
    ("regress_neg_origin_pipelined", "tests/gpu_regress/neg_origin_pipelined", None, {},
     {"M": 300, "N": 200, "K": 100, "r0": -5}, "neg_origin_pipelined", "check"),
    ("regress_neg_origin_pipelined_fast", "tests/gpu_regress/neg_origin_pipelined", None, {},
     {"M": 304, "N": 200, "K": 96, "r0": -5}, "neg_origin_pipelined", "check"),
    # A's tiles c0 columns off along its innermost dim (stored K x M): a
    # TMA box starting at no whole 16-byte vector stopped the kernel
    # (illegal instruction); 5 and -3 now run the cp.async loop, 8 TMA.
    ("regress_tma_origin_column", "tests/gpu_regress/tma_origin_column", None, {},
     {"M": 136, "N": 72, "K": 96, "c0": 5}, "tma_origin_column", "check"),
    ("regress_tma_origin_column_neg", "tests/gpu_regress/tma_origin_column", None, {},
     {"M": 136, "N": 72, "K": 96, "c0": -3}, "tma_origin_column", "check"),
    ("regress_tma_origin_column_tma", "tests/gpu_regress/tma_origin_column", None, {},
     {"M": 136, "N": 72, "K": 96, "c0": 8}, "tma_origin_column", "check"),
    # Tiles of 4- and 3-dimensional tensors in the mbarrier loop (TMA boxes
    # of rank 4 and 3 in the `_tma` twin); rows of 16-byte vectors in the
    # `_fast` one.
    ("regress_batched_strided_gemm", "tests/gpu_regress/batched_strided_gemm", None, {},
     {"BT": 2, "M": 100, "H": 3, "K": 70, "N": 136}, "batched_strided_gemm", "check"),
    ("regress_batched_strided_gemm_fast", "tests/gpu_regress/batched_strided_gemm", None, {},
     {"BT": 2, "M": 200, "H": 3, "K": 200, "N": 136}, "batched_strided_gemm", "check"),
    ("regress_nested_parallel_smem", "tests/gpu_regress/nested_parallel_smem", None, {}, {"N": 1},
     "nested_parallel_smem", "check"),
    ("regress_nested_parallel_deep", "tests/gpu_regress/nested_parallel_deep", None, {}, {"N": 1},
     "nested_parallel_deep", "check"),
    ("regress_anchored_inner_loop", "tests/gpu_regress/anchored_inner_loop", None, {}, {"M": 1001},
     "anchored_inner_loop", "check"),
    ("regress_anchored_inner_loop_t96", "tests/gpu_regress/anchored_inner_loop", None, {"THREADS": 96},
     {"M": 1001}, "anchored_inner_loop", "check"),
    ("regress_i32_fragment", "tests/gpu_regress/i32_fragment", None, {}, {"N": 1000}, "i32_fragment", "check"),
    # i4 tensors (packed two a byte): unpacked in registers, copied packed
    # into shared tiles (by cp.async in a pipeline), written nibble by
    # nibble; odd row lengths start rows mid-byte.
    ("regress_i4_fragment", "tests/gpu_regress/i4_fragment", None, {}, {"M": 70, "N": 384}, "i4_fragment", "check"),
    ("regress_i4_fragment_odd", "tests/gpu_regress/i4_fragment", None, {}, {"M": 37, "N": 301}, "i4_fragment",
     "check"),
    ("regress_i4_shared", "tests/gpu_regress/i4_shared", None, {}, {"M": 40, "N": 96}, "i4_shared", "check"),
    ("regress_i4_shared_odd", "tests/gpu_regress/i4_shared", None, {}, {"M": 9, "N": 37}, "i4_shared", "check"),
    ("regress_i4_store", "tests/gpu_regress/i4_store", None, {}, {"N": 100001}, "i4_store", "check"),
    ("regress_i4_pipelined", "tests/gpu_regress/i4_pipelined", None, {}, {"M": 40, "K": 640}, "i4_pipelined",
     "check"),
    ("regress_i4_pipelined_odd", "tests/gpu_regress/i4_pipelined", None, {}, {"M": 37, "K": 333}, "i4_pipelined",
     "check"),
    # Gathered and bounded loads whose rows move as 16-byte vectors, and
    # (odd D) whose misaligned rows go element by element.
    ("regress_row_vectors", "tests/gpu_regress/row_vectors", None, {}, {"T": 1001, "V": 500, "D": 128, "n": 900},
     "row_vectors", "check"),
    ("regress_row_vectors_odd", "tests/gpu_regress/row_vectors", None, {}, {"T": 1001, "V": 500, "D": 77, "n": 5},
     "row_vectors", "check"),
    # An embedding-sized gather and bounded copy (GB/s against copy).
    ("regress_row_vectors_16384x4096", "tests/gpu_regress/row_vectors", None, {},
     {"T": 16384, "V": 32000, "D": 4096, "n": 16384}, "row_vectors", "bench"),
    ("regress_i32_reduce", "tests/gpu_regress/i32_reduce", None, {}, {"M": 1000, "N": 300}, "i32_reduce", "check"),
    ("regress_minmax_neg", "tests/gpu_regress/minmax_neg", None, {}, {"N": 100000}, "minmax_neg", "check"),
    # NVRTC's merged byte stores at misaligned shared addresses (bug 20).
    ("regress_byte_stores", "tests/gpu_regress/byte_stores", None, {}, {"M": 1001, "K": 7, "sel": 1},
     "byte_stores", "check"),
    ("regress_min_of_compare", "tests/gpu_regress/min_of_compare", None, {}, {"N": 100000}, "min_of_compare",
     "check"),
    ("regress_small_block_sum", "tests/gpu_regress/small_block_reduce", None, {}, {"M": 1000, "N": 64},
     "small_block_sum", "check"),
    ("regress_small_block_max", "tests/gpu_regress/small_block_reduce", None, {}, {"M": 1000, "N": 64},
     "small_block_max", "check"),
    ("regress_minmax_neg_i64", "tests/gpu_regress/minmax_neg", None, {}, {"N": 100000}, "minmax_neg_z", "check"),
    ("regress_f64_fragment", "tests/gpu_regress/f64_fragment", None, {}, {"M": 1001, "N": 256}, "f64_fragment",
     "check"),
    ("regress_gemm_f32_k1", "gemm_f32", None, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 1},
     {"M": 130, "N": 70, "K": 33}, "gemm", "check"),
    ("regress_gemm_f32_k2", "gemm_f32", None, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 2},
     {"M": 130, "N": 70, "K": 33}, "gemm", "check"),
    ("regress_gemm_f32_k2_n1", "gemm_f32", None, {"BLOCK_K": 2, "BLOCK_N": 1}, {"M": 130, "N": 5, "K": 33},
     "gemm", "check"),
    # The samples beyond the first ten: ragged checks, then the shapes
    # inference servers run (the row kernels at 8192 x 8192, decode at
    # B=32, 32 heads, KV length 4096, head dim 128).
    ("add_rmsnorm_ragged", "add_rmsnorm", None, {}, {"M": 1001, "N": 3001, "eps": 1e-5}, "add_rmsnorm", "check"),
    ("add_rmsnorm_chunks_ragged", "add_rmsnorm", None, {"BLOCK_M": 2, "BLOCK_N": 1024},
     {"M": 1001, "N": 5001, "eps": 1e-5}, "add_rmsnorm", "check"),
    ("add_rmsnorm_8192", "add_rmsnorm", None, {}, {"M": 8192, "N": 8192, "eps": 1e-5}, "add_rmsnorm", "bench"),
    ("add_rmsnorm_8192_n8192_t512", "add_rmsnorm", None, {"BLOCK_N": 8192, "THREADS": 512},
     {"M": 8192, "N": 8192, "eps": 1e-5}, "add_rmsnorm", "bench"),
    ("add_rmsnorm_8192_n8192_t1024", "add_rmsnorm", None, {"BLOCK_N": 8192, "THREADS": 1024},
     {"M": 8192, "N": 8192, "eps": 1e-5}, "add_rmsnorm", "bench"),
    ("rope_ragged", "rope", None, {}, {"T": 1001, "H": 7, "MAXPOS": 2000}, "rope", "check"),
    ("rope_d64_ragged", "rope", None, {"HEAD_DIM": 64, "BLOCK_T": 8}, {"T": 333, "H": 5, "MAXPOS": 400}, "rope", "check"),
    ("rope_h40_ragged", "rope", None, {"BLOCK_H": 16, "BLOCK_T": 8}, {"T": 333, "H": 40, "MAXPOS": 500}, "rope",
     "check"),
    ("rope_8192", "rope", None, {}, {"T": 8192, "H": 64, "MAXPOS": 8192}, "rope", "bench"),
    ("rope_8192_h32_t256", "rope", None, {"BLOCK_H": 32, "THREADS": 256}, {"T": 8192, "H": 64, "MAXPOS": 8192},
     "rope", "bench"),
    ("rope_8192_h64_t256", "rope", None, {"BLOCK_H": 64, "THREADS": 256}, {"T": 8192, "H": 64, "MAXPOS": 8192},
     "rope", "bench"),
    ("rope_16384_q32", "rope", None, {}, {"T": 16384, "H": 32, "MAXPOS": 16384}, "rope", "bench"),
    ("rope_8192_t32", "rope", None, {"BLOCK_T": 32, "THREADS": 256}, {"T": 8192, "H": 64, "MAXPOS": 8192}, "rope",
     "bench"),
    ("transpose_ragged", "transpose", None, {}, {"M": 1001, "N": 777}, "transpose", "check"),
    ("transpose_b32_ragged", "transpose", None, {"BLOCK": 32, "THREADS": 128}, {"M": 333, "N": 65}, "transpose",
     "check"),
    ("transpose_8192", "transpose", None, {}, {"M": 8192, "N": 8192}, "transpose", "bench"),
    ("transpose_8192_b32", "transpose", None, {"BLOCK": 32, "THREADS": 128}, {"M": 8192, "N": 8192}, "transpose",
     "bench"),
    # f32 tiles (4-byte elements, swizzled every 4 rows), and 128 x 128.
    ("transpose_f32_ragged", "transpose", ("f16", "f32"), {}, {"M": 1001, "N": 777}, "transpose", "check"),
    ("transpose_b128_ragged", "transpose", None, {"BLOCK": 128, "THREADS": 512}, {"M": 333, "N": 1001},
     "transpose", "check"),
    ("transpose_f32_8192", "transpose", ("f16", "f32"), {}, {"M": 8192, "N": 8192}, "transpose", "bench"),
    ("transpose_8192_b128", "transpose", None, {"BLOCK": 128, "THREADS": 512}, {"M": 8192, "N": 8192},
     "transpose", "bench"),
    ("cross_entropy_ragged", "cross_entropy", None, {}, {"M": 77, "V": 50001}, "cross_entropy", "check"),
    ("cross_entropy_chunks_ragged", "cross_entropy", None, {"BLOCK_M": 2, "BLOCK_N": 1024}, {"M": 77, "V": 5001},
     "cross_entropy", "check"),
    ("cross_entropy_4096x128256", "cross_entropy", None, {}, {"M": 4096, "V": 128256}, "cross_entropy", "bench"),
    ("cross_entropy_4096x128256_n8192_t512", "cross_entropy", None, {"BLOCK_N": 8192, "THREADS": 512},
     {"M": 4096, "V": 128256}, "cross_entropy", "bench"),
    ("topk_ragged", "topk", None, {}, {"T": 1001}, "topk", "check"),
    ("topk_e256_ragged", "topk", None, {"EXPERTS": 256, "TOPK": 8, "BLOCK_T": 16}, {"T": 333}, "topk", "check"),
    ("topk_65536", "topk", None, {}, {"T": 65536}, "topk", "bench"),
    ("topk_e256_65536", "topk", None, {"EXPERTS": 256, "TOPK": 8, "BLOCK_T": 16}, {"T": 65536}, "topk", "bench"),
    # Flash decoding: the split kernel against each split's softmax, the
    # combine kernel on random partials (together, attention over S keys).
    ("flash_decode_split_ragged", "flash_decode:flash_decode_split", None, {},
     {"B": 3, "H": 8, "HKV": 2, "S": 1000, "NSPLIT": 7, "scale": 0.08838834764831845}, "flash_decode_split", "check"),
    ("flash_decode_split_short_ragged", "flash_decode:flash_decode_split", None, {"BLOCK_N": 16},
     {"B": 2, "H": 6, "HKV": 6, "S": 20, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "check"),
    ("flash_decode_combine_ragged", "flash_decode:flash_decode_combine", None, {}, {"B": 3, "H": 5, "NSPLIT": 37},
     "flash_decode_combine", "check"),
    ("flash_decode_split_b32_4096", "flash_decode:flash_decode_split", None, {},
     {"B": 32, "H": 32, "HKV": 32, "S": 4096, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_split_b32_4096_s8", "flash_decode:flash_decode_split", None, {},
     {"B": 32, "H": 32, "HKV": 32, "S": 4096, "NSPLIT": 8, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_split_b32_4096_n64_t256", "flash_decode:flash_decode_split", None, {"BLOCK_N": 64, "THREADS": 256},
     {"B": 32, "H": 32, "HKV": 32, "S": 4096, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_split_gqa_b32_4096", "flash_decode:flash_decode_split", None, {},
     {"B": 32, "H": 32, "HKV": 8, "S": 4096, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_combine_b32_s8", "flash_decode:flash_decode_combine", None, {}, {"B": 32, "H": 32, "NSPLIT": 8},
     "flash_decode_combine", "bench"),
    # The grouped kernel: each block reads its KV head once for BLOCK_H
    # query heads (ragged groups: 6 heads, 20 heads over two blocks, one
    # head; splits past a short sequence), then the shapes of Llama 3 8B
    # (32 heads over 8) and 70B (64 over 8) at B=32, KV length 4096 and
    # 8192, and multi-head attention beside flash_decode_split's.
    ("flash_decode_gqa_ragged", "flash_decode:flash_decode_split_gqa", None, {},
     {"B": 3, "H": 8, "HKV": 2, "S": 1000, "NSPLIT": 7, "scale": 0.08838834764831845}, "flash_decode_split", "check"),
    ("flash_decode_gqa_g6_ragged", "flash_decode:flash_decode_split_gqa", None, {},
     {"B": 2, "H": 12, "HKV": 2, "S": 333, "NSPLIT": 3, "scale": 0.08838834764831845}, "flash_decode_split", "check"),
    ("flash_decode_gqa_g20_ragged", "flash_decode:flash_decode_split_gqa", None, {},
     {"B": 1, "H": 40, "HKV": 2, "S": 777, "NSPLIT": 3, "scale": 0.08838834764831845}, "flash_decode_split", "check"),
    ("flash_decode_gqa_h32_n64_ragged", "flash_decode:flash_decode_split_gqa", None,
     {"BLOCK_H": 32, "BLOCK_N": 64, "STAGES": 2},
     {"B": 1, "H": 40, "HKV": 2, "S": 777, "NSPLIT": 3, "scale": 0.08838834764831845}, "flash_decode_split", "check"),
    ("flash_decode_gqa_mha_short_ragged", "flash_decode:flash_decode_split_gqa", None, {"BLOCK_N": 16},
     {"B": 2, "H": 6, "HKV": 6, "S": 20, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "check"),
    ("flash_decode_gqa_b32_4096", "flash_decode:flash_decode_split_gqa", None, {},
     {"B": 32, "H": 32, "HKV": 8, "S": 4096, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_gqa_b32_4096_n64_s2", "flash_decode:flash_decode_split_gqa", None, {"BLOCK_N": 64, "STAGES": 2},
     {"B": 32, "H": 32, "HKV": 8, "S": 4096, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_gqa_b32_8192_s8", "flash_decode:flash_decode_split_gqa", None, {},
     {"B": 32, "H": 32, "HKV": 8, "S": 8192, "NSPLIT": 8, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_gqa_h64_b32_4096", "flash_decode:flash_decode_split_gqa", None, {},
     {"B": 32, "H": 64, "HKV": 8, "S": 4096, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    ("flash_decode_gqa_mha_b32_4096", "flash_decode:flash_decode_split_gqa", None, {},
     {"B": 32, "H": 32, "HKV": 32, "S": 4096, "NSPLIT": 4, "scale": 0.08838834764831845}, "flash_decode_split", "bench"),
    # Grouped-query attention: 32 query heads over 8 KV heads.
    ("gqa_attention_ragged", "gqa_attention", None, {}, {"B": 2, "S": 1000, "H": 8, "HKV": 2}, "gqa_attention",
     "check"),
    ("gqa_attention_causal_d64_ragged", "gqa_attention", None, {"CAUSAL": 1, "HEAD_DIM": 64, "BLOCK_N": 32},
     {"B": 1, "S": 777, "H": 6, "HKV": 3}, "gqa_attention", "check"),
    ("gqa_attention_4096", "gqa_attention", None, {}, {"B": 4, "S": 4096, "H": 32, "HKV": 8}, "gqa_attention",
     "bench"),
    ("gqa_attention_causal_4096", "gqa_attention", None, {"CAUSAL": 1}, {"B": 4, "S": 4096, "H": 32, "HKV": 8},
     "gqa_attention", "bench"),
    ("gqa_attention_causal_d64_4096", "gqa_attention", None, {"CAUSAL": 1, "HEAD_DIM": 64},
     {"B": 4, "S": 4096, "H": 32, "HKV": 8}, "gqa_attention", "bench"),
    # Paged decode: pages drawn at random from the pool (some read twice,
    # so GB/s counts the pool once, roughly what is read).
    ("paged_decode_ragged", "paged_decode:paged_decode", None, {},
     {"B": 7, "H": 8, "HKV": 2, "NPAGES": 300, "MAXP": 40, "scale": 0.08838834764831845}, "paged_decode", "check"),
    ("paged_decode_d64_p32_ragged", "paged_decode:paged_decode", None, {"HEAD_DIM": 64, "PAGE": 32},
     {"B": 5, "H": 4, "HKV": 4, "NPAGES": 50, "MAXP": 9, "scale": 0.125}, "paged_decode", "check"),
    ("paged_decode_b32_4096", "paged_decode:paged_decode", None, {},
     {"B": 32, "H": 32, "HKV": 32, "NPAGES": 8192, "MAXP": 256, "scale": 0.08838834764831845}, "paged_decode_full", "bench"),
    ("paged_decode_gqa_b32_4096", "paged_decode:paged_decode", None, {},
     {"B": 32, "H": 32, "HKV": 8, "NPAGES": 8192, "MAXP": 256, "scale": 0.08838834764831845}, "paged_decode_full", "bench"),
    # Grouped-query paged decode: a block per (split, KV head, 16 query
    # heads), its partials checked as flash_decode_split_gqa's.
    ("paged_decode_gqa_split_ragged", "paged_decode:paged_decode_split_gqa", None, {},
     {"B": 7, "H": 8, "HKV": 2, "NPAGES": 300, "MAXP": 40, "NSPLIT": 3, "scale": 0.08838834764831845},
     "paged_decode_split", "check"),
    ("paged_decode_gqa_split_g20_ragged", "paged_decode:paged_decode_split_gqa", None, {"BLOCK_H": 32, "STAGES": 2},
     {"B": 3, "H": 40, "HKV": 2, "NPAGES": 100, "MAXP": 23, "NSPLIT": 5, "scale": 0.08838834764831845},
     "paged_decode_split", "check"),
    ("paged_decode_gqa_split_b32_4096", "paged_decode:paged_decode_split_gqa", None, {},
     {"B": 32, "H": 32, "HKV": 8, "NPAGES": 8192, "MAXP": 256, "NSPLIT": 4, "scale": 0.08838834764831845},
     "paged_decode_split_full", "bench"),
    ("paged_decode_gqa_split_b32_4096_s8", "paged_decode:paged_decode_split_gqa", None, {},
     {"B": 32, "H": 32, "HKV": 8, "NPAGES": 8192, "MAXP": 256, "NSPLIT": 8, "scale": 0.08838834764831845},
     "paged_decode_split_full", "bench"),
    ("paged_decode_gqa_split_b32_4096_s8_st6", "paged_decode:paged_decode_split_gqa", None, {"STAGES": 6},
     {"B": 32, "H": 32, "HKV": 8, "NPAGES": 8192, "MAXP": 256, "NSPLIT": 8, "scale": 0.08838834764831845},
     "paged_decode_split_full", "bench"),
    # The same kernel for multi-head attention (a KV head per query
    # head: 15 of 16 rows of its products unused, the bytes as before).
    ("paged_decode_gqa_split_mha_ragged", "paged_decode:paged_decode_split_gqa", None, {},
     {"B": 5, "H": 6, "HKV": 6, "NPAGES": 200, "MAXP": 30, "NSPLIT": 4, "scale": 0.08838834764831845},
     "paged_decode_split", "check"),
    ("paged_decode_gqa_split_mha_b32_4096_s4", "paged_decode:paged_decode_split_gqa", None, {},
     {"B": 32, "H": 32, "HKV": 32, "NPAGES": 8192, "MAXP": 256, "NSPLIT": 4, "scale": 0.08838834764831845},
     "paged_decode_split_full", "bench"),
    # MoE grouped GEMM: a random split of the rows over the experts.
    ("moe_gemm_ragged", "moe_gemm", None, {}, {"T": 1000, "N": 1030, "K": 700}, "moe_gemm", "check"),
    ("moe_gemm_e64_ragged", "moe_gemm", None, {"EXPERTS": 64, "BLOCK_N": 64}, {"T": 777, "N": 200, "K": 136},
     "moe_gemm", "check"),
    ("moe_gemm_mixtral", "moe_gemm", None, {}, {"T": 8192, "N": 14336, "K": 4096}, "moe_gemm", "bench"),
    ("moe_gemm_mixtral_128x128_t256", "moe_gemm", None, {"BLOCK_M": 128, "BLOCK_N": 128, "THREADS": 256},
     {"T": 8192, "N": 14336, "K": 4096}, "moe_gemm", "bench"),
    ("moe_gemm_e64", "moe_gemm", None, {"EXPERTS": 64}, {"T": 32768, "N": 1408, "K": 2048}, "moe_gemm", "bench"),
    # W8A8: int8 operands, i32 accumulation, per-row and per-column scales
    # (TFLOP/s is then tera-ops).
    ("gemm_w8a8_ragged", "gemm_w8a8", None, {}, {"M": 1000, "N": 1030, "K": 700}, "gemm_w8a8", "check"),
    # fp8 e4m3 with row and column scales (wgmma, sums promoted); the
    # benches at the tiling that runs fastest on the H200.
    ("gemm_fp8_ragged", "gemm_fp8", None, {}, {"M": 1000, "N": 1030, "K": 700}, "gemm_fp8", "check"),
    ("gemm_fp8_ragged_fast", "gemm_fp8", None, FP8_FAST, {"M": 1000, "N": 1040, "K": 704}, "gemm_fp8", "check"),
    ("gemm_fp8_4096", "gemm_fp8", None, FP8_FAST, {"M": 4096, "N": 4096, "K": 4096}, "gemm_fp8", "bench"),
    ("gemm_fp8_8192", "gemm_fp8", None, FP8_FAST, {"M": 8192, "N": 8192, "K": 8192}, "gemm_fp8", "bench"),
    ("gemm_w8a8_fast_ragged", "gemm_w8a8", None, {}, {"M": 1000, "N": 1040, "K": 704}, "gemm_w8a8", "check"),
    ("gemm_w8a8_4096", "gemm_w8a8", None, {}, {"M": 4096, "N": 4096, "K": 4096}, "gemm_w8a8", "bench"),
    ("gemm_w8a8_4096_128x128", "gemm_w8a8", None, {"BLOCK_M": 128, "BLOCK_N": 128},
     {"M": 4096, "N": 4096, "K": 4096}, "gemm_w8a8", "bench"),
    # W4A16: an i4 weight tensor with a scale and a zero point per 128,
    # at decode shapes (the weights' bytes bound it: GB/s against the copy
    # bandwidth).
    ("gemm_w4a16_ragged", "gemm_w4a16", None, {}, {"M": 5, "N": 1030, "K": 768}, "gemm_w4a16", "check"),
    ("gemm_w4a16_m64_ragged", "gemm_w4a16", None, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128},
     {"M": 100, "N": 333, "K": 512}, "gemm_w4a16", "check"),
    ("gemm_w4a16_m1_8192", "gemm_w4a16", None, {}, {"M": 1, "N": 8192, "K": 8192}, "gemm_w4a16", "bench"),
    ("gemm_w4a16_m16_8192", "gemm_w4a16", None, {}, {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16", "bench"),
    ("gemm_w4a16_m16_8192_n64", "gemm_w4a16", None, {"BLOCK_N": 64}, {"M": 16, "N": 8192, "K": 8192},
     "gemm_w4a16", "bench"),
    ("gemm_w4a16_m16_8192_n64_k128", "gemm_w4a16", None, {"BLOCK_N": 64, "BLOCK_K": 128},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16", "bench"),
    ("gemm_w4a16_m16_8192_n64_k128_s4", "gemm_w4a16", None, {"BLOCK_N": 64, "BLOCK_K": 128, "STAGES": 4},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16", "bench"),
    ("gemm_w4a16_m1_8192_n64_k128_s4", "gemm_w4a16", None, {"BLOCK_N": 64, "BLOCK_K": 128, "STAGES": 4},
     {"M": 1, "N": 8192, "K": 8192}, "gemm_w4a16", "bench"),
    # The same with k split over SPLIT_K blocks added into an f32 C.
    ("gemm_w4a16_splitk_ragged", "gemm_w4a16_splitk", None, {}, {"M": 5, "N": 1030, "K": 1280},
     "gemm_w4a16_splitk", "check"),
    ("gemm_w4a16_splitk_s4_ragged", "gemm_w4a16_splitk", None, {"SPLIT_K": 4, "BLOCK_K": 64, "BLOCK_N": 128},
     {"M": 17, "N": 333, "K": 640}, "gemm_w4a16_splitk", "check"),
    ("gemm_w4a16_splitk_m1_8192", "gemm_w4a16_splitk", None, {}, {"M": 1, "N": 8192, "K": 8192},
     "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192", "gemm_w4a16_splitk", None, {}, {"M": 16, "N": 8192, "K": 8192},
     "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192_s32", "gemm_w4a16_splitk", None, {"SPLIT_K": 32},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192_s8_n128", "gemm_w4a16_splitk", None, {"SPLIT_K": 8, "BLOCK_N": 128},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192_s8", "gemm_w4a16_splitk", None, {"SPLIT_K": 8},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192_s4", "gemm_w4a16_splitk", None, {"SPLIT_K": 4},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192_n128_t256", "gemm_w4a16_splitk", None, {"BLOCK_N": 128, "THREADS": 256},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192_s8_n128_t256_st4", "gemm_w4a16_splitk", None,
     {"SPLIT_K": 8, "BLOCK_N": 128, "THREADS": 256, "STAGES": 4},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_m16_8192_k64_st4", "gemm_w4a16_splitk", None, {"BLOCK_K": 64, "STAGES": 4},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    # The same with f16 zero points (the f32 dequantization), timed
    # beside the half pairs; the plain sample with i4 zero points.
    ("gemm_w4a16_splitk_f16z_ragged", "gemm_w4a16_splitk", W4_F16Z, {"SPLIT_K": 4, "BLOCK_K": 64, "BLOCK_N": 128},
     {"M": 17, "N": 333, "K": 640}, "gemm_w4a16_splitk", "check"),
    ("gemm_w4a16_splitk_f16z_m1_8192", "gemm_w4a16_splitk", W4_F16Z, {}, {"M": 1, "N": 8192, "K": 8192},
     "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_f16z_m16_8192", "gemm_w4a16_splitk", W4_F16Z, {}, {"M": 16, "N": 8192, "K": 8192},
     "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_f16z_m16_8192_s8", "gemm_w4a16_splitk", W4_F16Z, {"SPLIT_K": 8},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_splitk_bf16_ragged", "gemm_w4a16_splitk", ("f16", "bf16"),
     {"SPLIT_K": 4, "BLOCK_K": 64, "BLOCK_N": 128}, {"M": 17, "N": 333, "K": 640}, "gemm_w4a16_splitk", "check"),
    ("gemm_w4a16_splitk_bf16_m16_8192", "gemm_w4a16_splitk", ("f16", "bf16"), {},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16_splitk", "bench"),
    ("gemm_w8a16_splitk_ragged", "gemm_w4a16_splitk", W8, {"SPLIT_K": 4, "BLOCK_K": 64, "BLOCK_N": 128},
     {"M": 17, "N": 333, "K": 640}, "gemm_w4a16_splitk", "check"),
    ("gemm_w8a16_splitk_m16_8192", "gemm_w4a16_splitk", W8, {}, {"M": 16, "N": 8192, "K": 8192},
     "gemm_w4a16_splitk", "bench"),
    ("gemm_w4a16_i4z_ragged", "gemm_w4a16", W4_I4Z, {}, {"M": 5, "N": 1031, "K": 768}, "gemm_w4a16", "check"),
    ("gemm_w4a16_i4z_m64_ragged", "gemm_w4a16", W4_I4Z, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128},
     {"M": 100, "N": 333, "K": 512}, "gemm_w4a16", "check"),
    ("gemm_w4a16_i4z_m16_8192_n64_k128", "gemm_w4a16", W4_I4Z, {"BLOCK_N": 64, "BLOCK_K": 128},
     {"M": 16, "N": 8192, "K": 8192}, "gemm_w4a16", "bench"),
    # Conv2d as an implicit GEMM, NHWC, 3x3 taps, padding 1 (ResNet-like
    # layers); P and Q are the output's rows and columns.
    ("conv2d_ragged", "conv2d", None, {}, {"N": 2, "H": 17, "W": 70, "C": 40, "KO": 130, "PAD": 1, "P": 17, "Q": 70},
     "conv2d", "check"),
    ("conv2d_1x3_nopad_ragged", "conv2d", None, {"R": 1, "S": 3, "BLOCK_N": 64, "BLOCK_K": 64},
     {"N": 3, "H": 9, "W": 130, "C": 70, "KO": 9, "PAD": 0, "P": 9, "Q": 128}, "conv2d", "check"),
    ("conv2d_n32_56x56_c256", "conv2d", None, {}, {"N": 32, "H": 56, "W": 56, "C": 256, "KO": 256, "PAD": 1,
                                                   "P": 56, "Q": 56}, "conv2d", "bench"),
    ("conv2d_n32_56x56_c256_128x128_t256", "conv2d", None, {"BLOCK_M": 128, "BLOCK_N": 128, "THREADS": 256},
     {"N": 32, "H": 56, "W": 56, "C": 256, "KO": 256, "PAD": 1, "P": 56, "Q": 56}, "conv2d", "bench"),
    ("conv2d_n32_56x56_c64", "conv2d", None, {"BLOCK_N": 64}, {"N": 32, "H": 56, "W": 56, "C": 64, "KO": 64,
                                                               "PAD": 1, "P": 56, "Q": 56}, "conv2d", "bench"),
    # Attention backward (non-causal), the shape B=4 H=16 S=4096
    # D=64; LSE and Delta made consistent with the inputs.
    ("attn_bwd_delta_ragged", "attention_bwd:attn_bwd_delta", None, {}, {"B": 2, "S": 1000, "H": 3},
     "attn_bwd_delta", "check"),
    ("attn_bwd_dkdv_ragged", "attention_bwd:attn_bwd_dkdv", None, {}, {"B": 2, "S": 1000, "H": 3, "scale": 0.125},
     "attn_bwd_dkdv", "check"),
    ("attn_bwd_dq_ragged", "attention_bwd:attn_bwd_dq", None, {}, {"B": 2, "S": 1000, "H": 3, "scale": 0.125},
     "attn_bwd_dq", "check"),
    ("attn_bwd_dkdv_d128_ragged", "attention_bwd:attn_bwd_dkdv", None, {"HEAD_DIM": 128},
     {"B": 1, "S": 333, "H": 2, "scale": 0.08838834764831845}, "attn_bwd_dkdv", "check"),
    ("attn_bwd_dq_d128_ragged", "attention_bwd:attn_bwd_dq", None, {"HEAD_DIM": 128},
     {"B": 1, "S": 333, "H": 2, "scale": 0.08838834764831845}, "attn_bwd_dq", "check"),
    ("attn_bwd_delta_4096", "attention_bwd:attn_bwd_delta", None, {}, {"B": 4, "S": 4096, "H": 16},
     "attn_bwd_delta", "bench"),
    ("attn_bwd_dkdv_4096", "attention_bwd:attn_bwd_dkdv", None, {}, {"B": 4, "S": 4096, "H": 16, "scale": 0.125},
     "attn_bwd_dkdv", "bench"),
    ("attn_bwd_dq_4096", "attention_bwd:attn_bwd_dq", None, {}, {"B": 4, "S": 4096, "H": 16, "scale": 0.125},
     "attn_bwd_dq", "bench"),
    ("attn_bwd_dkdv_4096_n128_t256", "attention_bwd:attn_bwd_dkdv", None, {"BLOCK_N": 128, "THREADS": 256},
     {"B": 4, "S": 4096, "H": 16, "scale": 0.125}, "attn_bwd_dkdv", "bench"),
    ("attn_bwd_dq_4096_m128_t256", "attention_bwd:attn_bwd_dq", None, {"BLOCK_M": 128, "THREADS": 256},
     {"B": 4, "S": 4096, "H": 16, "scale": 0.125}, "attn_bwd_dq", "bench"),
    # int8 GEMMs on the integer matrix instructions (tests/lang/gemm_i8_*):
    # s8 operands over their whole range, s32 accumulators, compared
    # exactly; ragged shapes, and shapes whose rows are whole 16-byte
    # vectors (the fast k loop with the copies issued inside the gemm).
    ("gemm_i8_nt_ragged", "tests/lang/gemm_i8_nt", None, {}, {"M": 1000, "N": 1030, "K": 700}, "gemm_bt", "check"),
    ("gemm_i8_nt_ragged_fast", "tests/lang/gemm_i8_nt", None, {}, {"M": 1000, "N": 1040, "K": 704}, "gemm_bt",
     "check"),
    ("gemm_i8_nt_128x256x128", "tests/lang/gemm_i8_nt", None,
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "STAGES": 3, "THREADS": 256},
     {"M": 1000, "N": 1030, "K": 700}, "gemm_bt", "check"),
    ("gemm_i8_nn_ragged", "tests/lang/gemm_i8_nn", None, {}, {"M": 517, "N": 300, "K": 333}, "gemm", "check"),
    ("gemm_i8_tn_ragged", "tests/lang/gemm_i8_tn", None, {}, {"M": 300, "N": 260, "K": 200}, "gemm_tn", "check"),
    # fp8e4m3 (and e5m2) operands, f32 accumulators: mma.sync e4m3 on
    # sm_90a (tools/gpu_prepare.sh sm_80 for the in-register f16 path).
    ("gemm_fp8_nt_ragged", "tests/lang/gemm_fp8_nt", None, {}, {"M": 1000, "N": 1030, "K": 700}, "gemm_bt", "check"),
    ("gemm_fp8e5m2_nt_ragged", "tests/lang/gemm_fp8_nt", ("fp8e4m3", "fp8e5m2"), {}, {"M": 517, "N": 300, "K": 333},
     "gemm_bt", "check"),
    ("gemm_fp8_nt_4096", "tests/lang/gemm_fp8_nt", None,
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "STAGES": 3, "THREADS": 256},
     {"M": 4096, "N": 4096, "K": 4096}, "gemm_bt", "bench"),
    ("gemm_fp8_nt_8192", "tests/lang/gemm_fp8_nt", None,
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "STAGES": 3, "THREADS": 256},
     {"M": 8192, "N": 8192, "K": 8192}, "gemm_bt", "bench"),
    # 128 x 128 tiles over 256 threads: the tile whose promoted wgmma
    # sums fit (layout.c, PROMOTE_REGS); and a long K, where a sum kept
    # below f32 precision drifts furthest.
    ("gemm_fp8_nt_4096_128x128", "tests/lang/gemm_fp8_nt", None,
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "STAGES": 4, "THREADS": 256},
     {"M": 4096, "N": 4096, "K": 4096}, "gemm_bt", "bench"),
    ("gemm_fp8_nt_8192_128x128", "tests/lang/gemm_fp8_nt", None,
     {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "STAGES": 4, "THREADS": 256},
     {"M": 8192, "N": 8192, "K": 8192}, "gemm_bt", "bench"),
    ("gemm_fp8_nt_k4096_ragged", "tests/lang/gemm_fp8_nt", None, {},
     {"M": 300, "N": 200, "K": 4100}, "gemm_bt", "check"),
    # Tilings whose promoted wgmma sums fit in registers (64 accumulator
    # floats a thread, and as many for each gemm's own sum).
] + [
    (f"gemm_fp8_nt_{s}_{m}x{n}x{k}_s{st}_{t}t", "tests/lang/gemm_fp8_nt", None,
     {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "STAGES": st, "THREADS": t},
     {"M": s, "N": s, "K": s}, "gemm_bt", "bench")
    for s in (4096, 8192)
    for m, n, k, st, t in ((128, 128, 128, 5, 256), (128, 128, 64, 6, 256), (64, 256, 128, 4, 256),
                           (256, 128, 128, 3, 512), (128, 256, 128, 3, 512))
] + [
] + [
    # int8 at 4096^3, in TOPS (the floor: cuBLAS's f16 TFLOP/s of the
    # same run); gemm_i8_4096_MxNxK_sS_TT as for f16 above.
    (f"gemm_i8_4096_{m}x{n}x{k}_s{st}_{t}t", "tests/lang/gemm_i8_nt", None,
     {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "STAGES": st, "THREADS": t},
     {"M": 4096, "N": 4096, "K": 4096}, "gemm_bt", "bench")
    for m, n, k, st, t in [(128, 256, 128, 3, 256), (128, 256, 64, 4, 256), (256, 128, 128, 3, 256),
                           (128, 128, 128, 4, 128), (128, 128, 128, 3, 256), (64, 64, 64, 3, 128)]
] + [
    # Language constructs (tests/lang/), one output each.
    ("lang_rintf", "tests/lang/rounding", None, {}, {"N": 1000}, "lang_rintf", "check"),
    ("lang_roundf", "tests/lang/rounding", None, {}, {"N": 1000}, "lang_roundf", "check"),
    ("lang_abs", "tests/lang/rounding", None, {}, {"N": 1000}, "lang_abs", "check"),
    ("lang_sat_i32", "tests/lang/quantize", None, {}, {"N": 1000}, "lang_sat_i32", "check"),
    ("lang_argmax", "tests/lang/argmax", None, {}, {"M": 160, "N": 64}, "lang_argmax", "check"),
    ("lang_topk", "tests/lang/topk", None, {}, {"M": 160, "N": 64}, "lang_topk", "check"),
    ("lang_reduce_all_threads", "tests/lang/reduce_all_threads", None, {}, {"N": 1000},
     "lang_reduce_all_threads", "check"),
    # Ragged copies (tile_rows, tile_bounded, tile_masked) and run-time
    # tile_parallel extents, in real kernels; untouched elements must keep
    # the poison.
    ("lang_embedding", "tests/lang/embedding", None, {}, {"T": 1000, "V": 500, "D": 200},
     "lang_embedding", "check"),
    ("lang_paged_kv", "tests/lang/paged_kv", None, {},
     {"B": 4, "H": 8, "NPAGES": 40, "MAXP": 40, "S": 600}, "lang_paged_kv", "check"),
    ("lang_moe_group", "tests/lang/moe_group", None, {},
     {"E": 8, "MAXC": 300, "T": 2400, "N": 200, "K": 130}, "lang_moe_group", "check"),
    ("lang_masked_y", "tests/lang/masked", None, {}, {"T": 1001, "D": 100}, "lang_masked_y", "check"),
    ("lang_masked_z", "tests/lang/masked", None, {}, {"T": 1001, "D": 100}, "lang_masked_z", "check"),
    ("lang_masked_p", "tests/lang/masked", None, {}, {"T": 1001, "D": 100}, "lang_masked_p", "check"),
    # Real kernels written from docs/language.md alone (tests/kernels/),
    # each against torch on ragged shapes; the gemm ones also on their
    # fast loop's shapes (16-byte rows: TMA on sm_90a).
    ("kern_layernorm_bwd", "tests/kernels/layernorm_bwd", None, {}, {"M": 1000, "N": 1030}, "k_layernorm_bwd",
     "check"),
    ("kern_softmax_bwd", "tests/kernels/softmax_bwd", None, {}, {"M": 517, "N": 3000}, "k_softmax_bwd", "check"),
    ("kern_swiglu_gemm", "tests/kernels/swiglu_gemm", None, {}, {"M": 1000, "N": 700, "K": 333}, "k_swiglu_gemm",
     "check"),
    ("kern_swiglu_gemm_fast", "tests/kernels/swiglu_gemm", None, {}, {"M": 1000, "N": 704, "K": 336},
     "k_swiglu_gemm", "check"),
    ("kern_gemm_bias_gelu", "tests/kernels/gemm_bias_gelu", None, {}, {"M": 1000, "N": 1030, "K": 700},
     "k_gemm_bias_gelu", "check"),
    ("kern_gemm_bias_gelu_fast", "tests/kernels/gemm_bias_gelu", None, {}, {"M": 1000, "N": 1032, "K": 704},
     "k_gemm_bias_gelu", "check"),
    ("kern_quant_i8_token", "tests/kernels/quant_i8_token", None, {}, {"T": 333, "D": 4100}, "k_quant_i8_token",
     "check"),
    ("kern_fp8_quant_amax", "tests/kernels/fp8_quant_amax", None, {}, {"M": 1000, "N": 1030}, "k_fp8_quant_amax",
     "check"),
    ("kern_groupnorm", "tests/kernels/groupnorm", None, {}, {"B": 3, "G": 8, "CPG": 5, "HW": 999}, "k_groupnorm",
     "check"),
    ("kern_row_cumsum", "tests/kernels/row_cumsum", None, {}, {"M": 300, "N": 1000}, "k_row_cumsum", "check"),
    ("kern_histogram", "tests/kernels/histogram", None, {}, {"N": 100003, "NB": 61}, "k_histogram", "check"),
    ("kern_batched_gemm", "tests/kernels/batched_gemm", None, {}, {"BATCH": 37, "M": 50, "N": 70, "K": 33},
     "k_batched_gemm", "check"),
    ("kern_causal_conv1d", "tests/kernels/causal_conv1d", None, {}, {"B": 3, "T": 1000, "C": 300},
     "k_causal_conv1d", "check"),
    ("kern_embedding_bag", "tests/kernels/embedding_bag", None, {}, {"B": 40, "L": 70, "V": 3000, "D": 300},
     "k_embedding_bag", "check"),
    ("kern_kv_append", "tests/kernels/kv_append", None, {}, {"B": 5, "TNEW": 40, "H": 4, "MAXS": 300},
     "k_kv_append", "check"),
    ("kern_rmsnorm_bwd", "tests/kernels/rmsnorm_bwd", None, {}, {"M": 1000, "N": 1000}, "k_rmsnorm_bwd", "check"),
    ("kern_logsumexp", "tests/kernels/logsumexp", None, {}, {"M": 33, "N": 100000}, "k_logsumexp", "check"),
    ("kern_swa_attention", "tests/kernels/swa_attention", None, {}, {"B": 2, "H": 4, "S": 1000, "WIN": 300},
     "k_swa_attention", "check"),
    ("kern_moe_router", "tests/kernels/moe_router", None, {}, {"T": 1000, "E": 60}, "k_moe_router", "check"),
    ("kern_argmax_vocab", "tests/kernels/argmax_vocab", None, {}, {"B": 33, "V": 50257}, "k_argmax_vocab", "check"),
    ("kern_alibi_cross", "tests/kernels/alibi_cross", None, {}, {"B": 2, "H": 8, "S": 300, "T": 1000, "scale": 0.1},
     "k_alibi_cross", "check"),
    ("kern_alibi_cross_empty_rows", "tests/kernels/alibi_cross", None, {},
     {"B": 2, "H": 8, "S": 1000, "T": 301, "scale": 0.1}, "k_alibi_cross", "check"),
    ("kern_decode_ragged", "tests/kernels/decode_ragged", None, {}, {"B": 64, "HKV": 8, "T": 4000, "scale": 0.1},
     "k_decode_ragged", "check"),
]

# Warp specialization's own cases: bf16 and 4096^3 at the 3-stage
# tiling, skinny M = 64 at 3 stages, int8 and bias+ReLU at 3 stages
# (timed or checked beside their `_ws` twins).
CASES += [
    ("gemm_bf16_8192_128x256x64_s3_256t", "gemm", ("f16", "bf16"),
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 3, "THREADS": 256},
     {"M": 8192, "N": 8192, "K": 8192}, "gemm", "bench"),
    ("gemm_f16_4096_128x256x64_s3_256t", "gemm", None,
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 3, "THREADS": 256},
     {"M": 4096, "N": 4096, "K": 4096}, "gemm", "bench"),
    ("gemm_f16_skinny64_s3", "gemm", None, {"BLOCK_M": 64, "BLOCK_N": 128, "THREADS": 128, "STAGES": 3},
     {"M": 64, "N": 8192, "K": 8192}, "gemm", "bench"),
] + [(f"{c[0]}_s3",) + tuple(c[1:3]) + (dict(c[3], STAGES=3),) + tuple(c[4:]) for c in CASES
     if c[0] in ("gemm_i8_nt_ragged_fast", "gemm_bias_relu_ragged_fast")]

# The twins: each wgmma case on mma.sync (`_mma`).
CASES += [(f"{c[0]}_mma",) + tuple(c[1:]) for c in CASES if c[0] in WGMMA_CASES]
CASES += [(f"{c[0]}_tma",) + tuple(c[1:]) for c in CASES if c[0] in TMA_CASES]
# mma.sync with TMA: A's 128-byte rows by TMA, B's wider unpaneled rows
# by cp.async, both completing on one stage barrier.
CASES += [(f"{c[0]}_mma_tma",) + tuple(c[1:]) for c in CASES if c[0] in MMA_TMA_CASES]
CASES += [(f"{c[0]}_ws",) + tuple(c[1:]) for c in CASES if c[0] in WS_CASES]
CASES += [(f"{c[0]}_f32",) + tuple(c[1:]) for c in CASES if c[0] in PAIRS_CASES]
CASES += [(f"{c[0]}_plans",) + tuple(c[1:]) for c in CASES if c[0] in PLANS_CASES]

# Persistence's own checks: ragged shapes with several tiles per block
# (the stage ring running on from tile to tile), through the producer
# (`_fast`: 16-byte rows) and through the consumers' cp.async fallback;
# f16, bf16, int8 exactly, bias+ReLU, the batched gemm's z; and the
# 8192^3 and 4096^3 tilings at 4 stages for the benches.
CASES += [
    ("gemm_f16_many_ragged", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 3000, "N": 2990, "K": 300}, "gemm", "check"),
    ("gemm_f16_many_small_fast", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 1400, "N": 1304, "K": 104}, "gemm", "check"),
    ("gemm_f16_many_ragged_fast", "gemm", None,
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "STAGES": 3, "THREADS": 128},
     {"M": 3000, "N": 2992, "K": 296}, "gemm", "check"),
    ("gemm_bf16_many_ragged_fast_s4", "gemm", ("f16", "bf16"),
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "THREADS": 256},
     {"M": 3000, "N": 4104, "K": 1000}, "gemm", "check"),
    ("gemm_f16_many_ragged_s4", "gemm", None,
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "THREADS": 256},
     {"M": 3000, "N": 4100, "K": 1001}, "gemm", "check"),
    ("gemm_i8_nt_many_ragged_fast", "tests/lang/gemm_i8_nt", None, {},
     {"M": 3000, "N": 2064, "K": 704}, "gemm_bt", "check"),
    ("gemm_bias_relu_many_ragged_fast", "gemm_bias_relu", None, {"STAGES": 3},
     {"M": 3000, "N": 2056, "K": 712}, "gemm_bias_relu", "check"),
    ("regress_batched_strided_gemm_many_fast", "tests/gpu_regress/batched_strided_gemm", None, {},
     {"BT": 4, "M": 1000, "H": 5, "K": 200, "N": 456}, "batched_strided_gemm", "check"),
    ("gemm_bf16_8192_128x256x64_s4_256t", "gemm", ("f16", "bf16"),
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "THREADS": 256},
     {"M": 8192, "N": 8192, "K": 8192}, "gemm", "bench"),
    ("gemm_f16_4096_128x256x64_s4_256t", "gemm", None,
     {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "THREADS": 256},
     {"M": 4096, "N": 4096, "K": 4096}, "gemm", "bench"),
]
PS_NEW = ["gemm_bf16_8192_128x256x64_s4_256t", "gemm_f16_4096_128x256x64_s4_256t"]
CASES += [(f"{c[0]}_ws",) + tuple(c[1:]) for c in CASES if c[0] in PS_NEW]
FLAGS.update({f"{name}_ws": ["--tma", "--warp-specialize"] for name in PS_NEW})
# The `_ps` twins: --tma --persistent, one wave of warp-specialized
# blocks walking the output tiles (expand_pipeline.c, ws_persist).
PS_CASES = WS_CASES + PS_NEW + [c[0] for c in CASES if "_many_" in c[0]]
FLAGS.update({f"{name}_ps": ["--tma", "--persistent"] for name in PS_CASES})
CASES += [(f"{c[0]}_ps",) + tuple(c[1:]) for c in CASES if c[0] in PS_CASES]

# TMA stores (tma_store.c; on by default on sm_90a, so the wgmma cases
# above take them where the tile fits): the `_nts` twins, translated with
# --no-tma-store, store from registers, checked and timed beside them.
NTS_CASES = ["gemm_f16_ragged_fast", "gemm_f16_8192_128x256x64_s4_256t", "gemm_bf16_8192_128x256x64_s4_256t",
             "gemm_f16_8192_128x256x64_s4_256t_ps", "gemm_bf16_8192_128x256x64_s4_256t_ps",
             "gemm_f16_4096_128x256x64_s4_256t"]
FLAGS.update({f"{name}_nts": FLAGS.get(name, []) + ["--no-tma-store"] for name in NTS_CASES})
CASES += [(f"{c[0]}_nts",) + tuple(c[1:]) for c in CASES if c[0] in NTS_CASES]
# Persistent kernels launched as on a GPU of fewer SMs (`device.sms`
# among the shapes: launch_manifest.device_key): a grid of 7 (or 66) x
# the blocks per SM, each block walking many more tiles from blockIdx.x
# in steps of gridDim.x, its stores through a region of its own.
SMS_CASES = [("gemm_f16_many_ragged_fast_ps", 7), ("gemm_bf16_many_ragged_fast_s4_ps", 7),
             ("gemm_f16_many_ragged_s4_ps", 7), ("gemm_f16_8192_128x256x64_s4_256t_ps", 66)]
for _name, _sms in SMS_CASES:
    _c = next(c for c in CASES if c[0] == _name)
    FLAGS[f"{_name}_sms{_sms}"] = FLAGS[_name]
    CASES.append((f"{_name}_sms{_sms}",) + tuple(_c[1:4]) + (dict(_c[4], **{"device.sms": _sms}),) + tuple(_c[5:]))
# A small one for compute-sanitizer: 128 x 256 tiles at 4 stages (the
# region of its own holds two of four panels), 3 x 3 tiles on 2 blocks.
FLAGS["gemm_f16_small_ragged_fast_s4_ps_sms2"] = ["--tma", "--persistent"]
CASES.append(("gemm_f16_small_ragged_fast_s4_ps_sms2", "gemm", None,
              {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "THREADS": 256},
              {"M": 300, "N": 520, "K": 200, "device.sms": 2}, "gemm", "check"))
