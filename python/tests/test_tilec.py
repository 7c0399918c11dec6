"""The tilec Python package on NumPy (always), torch on the CPU (where
installed) and CUDA (where a GPU is): kernels checked against NumPy
references on random ragged data with poisoned outputs, and every kind
of bad call an exception naming the parameter.

Where TILEC_PRETRANSLATED names a directory (pretranslated.py wrote it;
tools/python_gpu_prepare.sh does, for a GPU machine without libclang),
every kernel is built from it with tilec.load instead of tilec.compile,
and the tests make the same calls and assertions; the tests that need
the translator itself skip where libtilec cannot load.  Elsewhere the
gemm tests run twice: on tilec.compile's kernel and on tilec.load's of
what tilec.translate wrote."""
import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import pretranslated
import tilec

ROOT = os.environ.get("TILEC_SOURCE_ROOT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")
GEMM = os.path.join(ROOT, "samples", "gemm_f32.c")
SOFTMAX = os.path.join(ROOT, "samples", "softmax.c")
TWO = os.path.join(ROOT, "tests", "launch", "two_kernels.c")

rng = np.random.default_rng(20261201)
PRETRANSLATED = os.environ.get("TILEC_PRETRANSLATED")
HAVE_TRANSLATOR = tilec.translator_available()
needs_translator = pytest.mark.skipif(
    not HAVE_TRANSLATOR, reason="libtilec (the translator) cannot load here")


def build(program, target="openmp", kernel=None):
    """The kernel: tilec.compile's, or tilec.load's of the pre-translated
    directory."""
    if PRETRANSLATED:
        return pretranslated.load(PRETRANSLATED, program, target, kernel)
    return tilec.compile(program, target=target, kernel=kernel)


def translated(program, target="openmp", kernel=None):
    """(standalone source, launch document) as text: the pre-translated
    directory's (as build takes them), or what tilec.translate writes
    (CUDA for sm_90a)."""
    if PRETRANSLATED:
        paths = pretranslated.files(PRETRANSLATED, program, target, kernel)
        return tuple(open(p).read() for p in paths)
    common = dict(target=target, kernel=kernel,
                  arch="sm_90a" if target == "cuda" else None)
    return (tilec.translate(program, standalone=True, **common),
            tilec.translate(program, emit="launch", **common))


def load_translated(program, target="openmp", kernel=None):
    """tilec.load of what tilec.translate writes for the program."""
    return tilec.load(*translated(program, target, kernel))


@pytest.fixture(scope="module",
                params=["pretranslated"] if PRETRANSLATED
                else ["compile", "load"])
def gemm(request):
    if request.param == "load":
        return load_translated(GEMM)
    return build(GEMM)


def operands(m=70, n=50, k=33, dtype=np.float32):
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    c = np.full((m, n), np.nan, dtype)
    return a, b, c


def check_gemm(a, b, c):
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert not np.isnan(c).any()
    assert np.abs(c - want).max() <= 1e-5 * max(1.0, np.abs(want).max())


@needs_translator
def test_translate_returns_source():
    src = tilec.translate(GEMM, target="cuda", arch="sm_80")
    assert 'extern "C" __global__' in src and "gemm_f32(" in src
    src = tilec.translate(GEMM, defines={"BLOCK_M": 32})
    assert "tilec_entry_gemm_f32" in src and "BLOCK_M = 32" in src


def test_gemm_extents_inferred(gemm):
    a, b, c = operands()
    gemm(a, b, c)
    check_gemm(a, b, c)


def test_gemm_every_argument_and_keywords(gemm):
    a, b, c = operands(31, 17, 9)
    gemm(31, 17, 9, a, b, c)
    check_gemm(a, b, c)
    a, b, c = operands(5, 130, 64)
    gemm(C=c, B=b, A=a, K=64)
    check_gemm(a, b, c)


def test_kernel_describes_itself(gemm):
    assert gemm.params == ["M", "N", "K", "A", "B", "C"]
    assert gemm.manifest["params"][3]["ctype"] == "const float *"
    assert "tilec_entry_gemm_f32" in gemm.source


def gemm_record(path, bucket, block_m):
    """A tuning record of gemm_f32 for the CPU at one shape bucket,
    choosing BLOCK_M (what `tilec tune` writes, cut to what --config and
    the dispatch read)."""
    import hashlib
    with open(GEMM, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    rec = {"format": "tilec-tune-record/1", "kernel": "gemm_f32",
           "source": "samples/gemm_f32.c", "source_sha256": sha,
           "target": "openmp", "shape_bucket": bucket,
           "chosen": {"BLOCK_M": block_m, "BLOCK_N": 64, "BLOCK_K": 16}}
    with open(path, "w") as f:
        json.dump(rec, f, indent=2, sort_keys=True)
    return str(path)


@needs_translator
def test_dispatch_over_records_by_shape(tmp_path):
    small = gemm_record(tmp_path / "small.json", {"M": 64, "N": 64, "K": 64},
                        32)
    large = gemm_record(tmp_path / "large.json",
                        {"M": 1024, "N": 1024, "K": 512}, 128)
    # The large record first: the buckets decide, smallest first.
    d = tilec.compile(GEMM, config=[large, small])
    assert isinstance(d, tilec.Dispatch) and d.records == [large, small]
    assert ["BLOCK_M = 128" in k.source for k in d.kernels] == [True, False]
    assert d.pick(M=64, N=64, K=64) == 1
    assert d.pick(M=65, N=1, K=1) == 0
    assert d.pick(M=5000, N=5000, K=5000) == 0  # past both: the largest
    # Outside 64 bits: refused, not wrapped by ctypes into a small M.
    for m in (2 ** 63, -2 ** 63 - 1, 2 ** 64 + 8):
        with pytest.raises(ValueError, match="M: .* does not fit in 64 bits"):
            d.pick(M=m, N=1, K=1)
    # Which record's kernel each call runs, counted on the way through.
    used = []
    d.kernels = [lambda *a, _k=k, _i=i, **kw: (used.append(_i), _k(*a, **kw))
                 for i, k in enumerate(d.kernels)]
    for m, n, kk, want in ((40, 30, 20, 1), (300, 7, 9, 0), (64, 64, 65, 0)):
        used.clear()
        a, b, c = operands(m, n, kk)
        d(a, b, c)                        # M, N, K from the shapes
        check_gemm(a, b, c)
        a, b, c = operands(m, n, kk)
        d(m, n, kk, a, b, c)              # every argument
        check_gemm(a, b, c)
        a, b, c = operands(m, n, kk)
        d(C=c, B=b, A=a, K=kk)            # by name
        check_gemm(a, b, c)
        assert used == [want] * 3, (m, n, kk, used)
    # One record in a list is that record's Kernel.
    assert isinstance(tilec.compile(GEMM, config=[small]), tilec.Kernel)
    # Two records of one bucket: refused when compiled, naming both.
    twin = gemm_record(tmp_path / "twin.json", {"M": 64, "N": 64, "K": 64},
                       64)
    with pytest.raises(ValueError, match=r"twin.json:\d+:\d+: error: key "
                       r'"shape_bucket": the bucket of .*small.json too'):
        tilec.compile(GEMM, config=[small, twin])
    odd = gemm_record(tmp_path / "odd.json", {"Q": 8}, 64)
    with pytest.raises(ValueError, match=r'"shape_bucket.Q": the launch '
                       r"gives no value for Q"):
        tilec.compile(GEMM, config=[small, odd])


def test_wrong_dtype_is_a_type_error(gemm):
    a, b, c = operands()
    with pytest.raises(TypeError, match=r"tensor 'A'.*f64"):
        gemm(a.astype(np.float64), b, c)
    with pytest.raises(TypeError, match=r"tensor 'B'.*no tilec dtype.*complex"):
        gemm(a, b.astype(np.complex64), c)
    assert np.isnan(c).all()


def test_bad_shapes_are_value_errors(gemm):
    a, b, c = operands()
    with pytest.raises(ValueError, match=r"'K'.*'A'.*'B'"):
        gemm(a, b[:-1], c)
    with pytest.raises(ValueError, match=r"tensor 'A'.*rank 2.*rank 1"):
        gemm(a.reshape(-1), b, c)
    with pytest.raises(ValueError, match=r"tensor 'A' has extent 70.*71"):
        gemm(M=71, A=a, B=b, C=c)
    # A transposed view is not row-major.
    at = np.ascontiguousarray(a.T).T
    with pytest.raises(ValueError, match=r"tensor 'A' is not row-major"):
        gemm(at, b, c)
    assert np.isnan(c).all()


def test_wrong_calls_are_type_errors(gemm):
    a, b, c = operands()
    with pytest.raises(TypeError, match=r"2 arguments by position"):
        gemm(a, b)
    with pytest.raises(TypeError, match=r"missing argument: tensor 'C'"):
        gemm(A=a, B=b)
    with pytest.raises(TypeError, match=r"no parameter 'Q'"):
        gemm(a, b, c, Q=1)
    with pytest.raises(TypeError, match=r"tensor 'A'.*integer"):
        gemm(A=3, B=b, C=c)
    with pytest.raises(TypeError, match=r"argument 'B': a tensor"):
        gemm(A=a, B="b", C=c)
    # Swapped: B [K][N] where A [M][K] goes.
    with pytest.raises(ValueError, match=r"'M'"):
        gemm(b, a, c)
    assert np.isnan(c).all()


def test_byte_swapped_array_is_a_type_error(gemm):
    # Its dtype is named float32 too: read as f32 it would be garbage.
    a, b, c = operands()
    with pytest.raises(TypeError, match=r"tensor 'A'.*non-native byte order"):
        gemm(a.astype(">f4"), b, c)
    assert np.isnan(c).all()


def test_rank_past_the_runtimes_largest(gemm):
    a, b, c = operands()
    with pytest.raises(ValueError, match=r"tensor 'A'.*rank 2.*rank 9"):
        gemm(np.zeros((1,) * 9, np.float32), b, c)
    gemm(a, b, c)  # the grown buffers describe rank 2 again
    check_gemm(a, b, c)


def test_calls_reuse_nothing_stale(gemm):
    """Each call fills the argument structs a previous call left: by
    position after by name, contiguous after strided, other sizes."""
    a, b, c = operands(33, 20, 7)
    gemm(K=7, A=a, B=b, C=c)
    check_gemm(a, b, c)
    with pytest.raises(ValueError, match=r"tensor 'A' is not row-major"):
        gemm(np.ascontiguousarray(a.T).T, b, c)
    a, b, c = operands(9, 70, 40)
    gemm(a, b, c)
    check_gemm(a, b, c)
    a, b, c = operands(12, 5, 3)
    gemm(12, 5, 3, a, b, c)
    check_gemm(a, b, c)


def test_names_do_not_outlive_their_call(gemm):
    """The same number of arguments by name, then by position, then by
    name in another order: each call's names are its own."""
    for _ in range(2):
        a, b, c = operands(21, 13, 8)
        gemm(C=c, A=a, B=b)
        check_gemm(a, b, c)
        a, b, c = operands(22, 14, 9)
        gemm(a, b, c)
        check_gemm(a, b, c)
        a, b, c = operands(23, 15, 10)
        gemm(B=b, C=c, A=a)
        check_gemm(a, b, c)


class _Sub(np.ndarray):
    pass


class _EmptyFirst(np.ndarray):
    pass


def test_array_subclasses_views_and_offsets(gemm):
    """Arrays whose data does not start their buffer, subclasses, and a
    subclass first met empty: each read at its own data pointer."""
    a, b, c = operands(40, 24, 16)
    big = rng.uniform(-1, 1, (41, 16)).astype(np.float32)
    a = big[1:]  # a view one row in
    gemm(a, b, c)
    check_gemm(a, b, c)
    a, b, c = (x.view(_Sub) for x in operands(19, 29, 5))
    gemm(a, b, c)
    check_gemm(np.asarray(a), np.asarray(b), np.asarray(c))
    e = np.zeros((0, 5), np.float32).view(_EmptyFirst)
    gemm(e, b, np.zeros((0, 29), np.float32).view(_EmptyFirst))
    a2, b2, c2 = (x.view(_EmptyFirst) for x in operands(19, 29, 5))
    gemm(a2, b2, c2)
    check_gemm(np.asarray(a2), np.asarray(b2), np.asarray(c2))


def test_array_layout_not_numpys_falls_back(gemm, monkeypatch):
    """Where the data pointer is not where NumPy's C ABI puts it (the
    check made once per array type fails), arrays are described through
    __array_struct__ and the call is still right."""
    from tilec import _arrays

    class Elsewhere(np.ndarray):
        pass

    monkeypatch.setattr(_arrays, "DATA_AT", _arrays.DATA_AT + 8)
    monkeypatch.setattr(_arrays, "_probed", [])
    a, b, c = (x.view(Elsewhere) for x in operands(17, 9, 6))
    gemm(a, b, c)
    assert _arrays.KINDS[Elsewhere] is _arrays._numpy
    check_gemm(np.asarray(a), np.asarray(b), np.asarray(c))


def test_integers_outside_64_bits_are_value_errors(gemm):
    # They once wrapped: 2**64 + 70 was taken for 70 and the kernel ran.
    a, b, c = operands()
    with pytest.raises(ValueError, match=r"argument 1 \(by position\): "
                       r"18446744073709551686 does not fit in 64 bits"):
        gemm(2 ** 64 + 70, 50, 33, a, b, c)
    with pytest.raises(ValueError, match=r"argument 'K': -9223372036854775809 "
                       r"does not fit in 64 bits"):
        gemm(A=a, B=b, C=c, K=-2 ** 63 - 1)
    assert np.isnan(c).all()
    gemm(70, 50, 33, a, b, c)
    check_gemm(a, b, c)


def test_arguments_land_where_the_runtime_reads():
    """tilec_arg written by one struct pack reads back field by field
    through ctypes' declaration of it (_lib.Arg)."""
    from tilec import _arrays, _lib
    arr = (_lib.Arg * 3)()
    slots = [_arrays.Slot(arr, i) for i in range(3)]
    _arrays._tensor(slots[1], 0, 0x1234, 5, (3, 4), (4, 1),
                    _lib.MEMORY_DEVICE, 2)
    t = arr[1]
    assert (t.size, t.name, t.kind, t.data, t.dtype, t.rank) == (
        ctypes.sizeof(_lib.Arg), None, _lib.ARG_TENSOR, 0x1234, 5, 2)
    assert (t.shape[0], t.shape[1], t.strides[0], t.strides[1]) == (3, 4, 4, 1)
    assert (t.memory, t.device) == (_lib.MEMORY_DEVICE, 2)
    name = b"alpha"
    _arrays._float(slots[2], ctypes.cast(ctypes.c_char_p(name),
                                         ctypes.c_void_p).value,
                   0.25, [], [])
    _arrays._int(slots[0], 0, -7, [], [])
    assert (arr[2].kind, arr[2].name, arr[2].fvalue) == (
        _lib.ARG_FLOAT, b"alpha", 0.25)
    assert (arr[0].kind, arr[0].ivalue, arr[0].size) == (
        _lib.ARG_INT, -7, ctypes.sizeof(_lib.Arg))


def test_the_call_path_is_the_one_expected():
    """tests/python.sh and tools/python_gpu_run.sh say which path the
    package must take (TILEC_EXPECT_CALL_PATH): the C extension where
    it was built, ctypes where TILEC_PYTHON_CTYPES turns it off."""
    want = os.environ.get("TILEC_EXPECT_CALL_PATH")
    if not want:
        pytest.skip("TILEC_EXPECT_CALL_PATH is not set")
    assert tilec.call_path == want


def _extension_only(kernel, monkeypatch):
    """Make kernel's ctypes path fail the test: every call after this
    must be described and launched (or refused) by the extension."""
    if tilec.call_path != "extension":
        pytest.skip("the C extension is not in use (tilec.call_path %s)"
                    % tilec.call_path)

    def no(args, kwargs):
        raise AssertionError("the call went through ctypes")
    monkeypatch.setattr(kernel, "_call_ctypes", no)


def test_extension_takes_arrays_and_numbers(monkeypatch):
    """Arrays, views, ints, floats, by position and by name: all in C,
    and its refusals the runtime's, as TypeError and ValueError naming
    the parameter."""
    gemm = build(GEMM)
    _extension_only(gemm, monkeypatch)
    a, b, c = operands(37, 21, 11)
    gemm(a, b, c)
    check_gemm(a, b, c)
    a, b, c = operands(6, 9, 130)
    gemm(C=c, K=130, A=a, B=b)
    check_gemm(a, b, c)
    big = rng.uniform(-1, 1, (8, 130)).astype(np.float32)
    a, c = big[2:], np.full((6, 9), np.nan, np.float32)
    gemm(6, 9, 130, a, b, c)
    check_gemm(a, b, c)
    with pytest.raises(TypeError, match=r"tensor 'A'.*f64"):
        gemm(a.astype(np.float64), b, c)
    with pytest.raises(ValueError, match=r"tensor 'A' is not row-major"):
        gemm(np.ascontiguousarray(a.T).T, b, c)
    with pytest.raises(ValueError, match=r"tensor 'A' has extent 6.*7"):
        gemm(M=7, A=a, B=b, C=c)
    with pytest.raises(TypeError, match=r"no parameter 'Q'"):
        gemm(a, b, c, Q=1)


class _FakeDtype:
    """Stands for a torch dtype: _arrays reads its name from str()."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class _FakeTensor:
    """What _arrays._torch reads of a torch tensor, over a NumPy array:
    the describer tested where torch is not installed."""
    dtypes = {}

    def __init__(self, x, device=-1):
        self.x, self.device = x, device
        name = {"float32": "float32", "float64": "float64",
                "complex64": "complex64"}[x.dtype.name]
        self.dtype = self.dtypes.setdefault(name, _FakeDtype(name))
        self.shape = tuple(x.shape)
        self.is_cuda, self.is_cpu = device >= 0, device < 0

    def get_device(self):
        return self.device

    def is_contiguous(self):
        return self.x.flags.c_contiguous

    def stride(self):
        return tuple(s // self.x.itemsize for s in self.x.strides)

    def data_ptr(self):
        return self.x.__array_interface__["data"][0]


@pytest.mark.parametrize("path", ["call", "ctypes"])
def test_torch_describer_on_both_paths(path, monkeypatch):
    """The torch describer (_arrays._torch, and the extension's copy of
    it) on tensor-like objects: dtype, shape, strides, data and where
    the memory is, each refusal naming the parameter."""
    from tilec import _arrays
    monkeypatch.setitem(_arrays.KINDS, _FakeTensor, _arrays._torch)
    gemm = build(GEMM)
    if path == "ctypes":
        def call(*args, **kwargs):
            return gemm._call_ctypes(args, kwargs)
    else:
        _extension_only(gemm, monkeypatch)
        call = gemm
    a, b, c = operands(29, 18, 7)
    call(_FakeTensor(a), _FakeTensor(b), _FakeTensor(c))
    check_gemm(a, b, c)
    a, b, c = operands(3, 5, 66)
    call(B=_FakeTensor(b), C=_FakeTensor(c), A=_FakeTensor(a))
    check_gemm(a, b, c)
    with pytest.raises(ValueError, match=r"tensor 'A' is not row-major"):
        call(_FakeTensor(np.ascontiguousarray(a.T).T), _FakeTensor(b),
             _FakeTensor(c))
    with pytest.raises(TypeError, match=r"tensor 'B'.*f64"):
        call(_FakeTensor(a), _FakeTensor(b.astype(np.float64)),
             _FakeTensor(c))
    with pytest.raises(ValueError, match=r"tensor 'C' is in the memory of "
                       r"GPU 1; the kernel runs on the CPU"):
        call(_FakeTensor(a), _FakeTensor(b), _FakeTensor(c, device=1))
    if path == "ctypes":
        with pytest.raises(TypeError, match=r"tensor 'A'.*no tilec dtype"
                           r".*a torch tensor of complex64"):
            call(_FakeTensor(a.astype(np.complex64)), _FakeTensor(b),
                 _FakeTensor(c))


def test_threads_call_one_kernel(gemm):
    import threading
    shapes = [(17 + 9 * i, 23 + 5 * i, 11 + 3 * i) for i in range(6)]
    work = [operands(*s) for s in shapes]
    errors = []

    def run(ops):
        try:
            for _ in range(20):
                gemm(*ops)
        except Exception as e:  # noqa: BLE001  reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for w in work:
        check_gemm(*w)


def test_tensor_in_gpu_memory_on_the_cpu(gemm):
    """A DLPack tensor that says it is on a GPU, given to an openmp
    kernel."""
    from tilec import _arrays

    class OnGpu:
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, stream=None):
            capsule = self.x.__dlpack__()
            t = _arrays._DLTensor.from_address(
                _arrays._capsule_pointer(capsule, b"dltensor"))
            t.device.device_type = _arrays.DL_CUDA
            return capsule

    a, b, c = operands()
    with pytest.raises(ValueError, match=r"tensor 'B' is in the memory of "
                       r"GPU 0; the kernel runs on the CPU"):
        gemm(a, OnGpu(b), c)
    assert np.isnan(c).all()


def test_cuda_toolkit_from_the_wheels(tmp_path, monkeypatch):
    """Without TILEC_NVRTC, CUDA_HOME or a system toolkit, NVRTC and
    cuda_fp16.h come from the nvidia-cuda-* wheels; where none is, the
    note lists every place looked in."""
    from tilec import _arrays
    for var in ("TILEC_NVRTC", "CUDA_HOME"):
        monkeypatch.setenv(var, "")  # so that the test's setting is undone
        monkeypatch.delenv(var)
    monkeypatch.setattr(_arrays, "SYSTEM_CUDA", str(tmp_path / "no-cuda"))
    empty = tmp_path / "empty"
    (empty / "nvidia").mkdir(parents=True)
    monkeypatch.setattr(_arrays, "_looked", [])
    monkeypatch.setattr("sys.path", [str(empty)])
    _arrays.find_cuda_toolkit()
    note = _arrays.nvrtc_note()
    assert str(empty / "nvidia" / "cuda_nvrtc" / "lib") in note
    assert str(empty / "nvidia" / "cuda_runtime" / "include") in note
    assert "TILEC_NVRTC" not in os.environ

    site = tmp_path / "site"
    lib = site / "nvidia" / "cuda_nvrtc" / "lib"
    inc = site / "nvidia" / "cuda_runtime" / "include"
    lib.mkdir(parents=True)
    inc.mkdir(parents=True)
    (lib / "libnvrtc.so.12").write_bytes(b"")
    (inc / "cuda_fp16.h").write_text("")
    monkeypatch.setattr(_arrays, "_looked", [])
    monkeypatch.setattr("sys.path", [str(empty), str(site)])
    _arrays.find_cuda_toolkit()
    assert os.environ["TILEC_NVRTC"] == str(lib / "libnvrtc.so.12")
    assert os.environ["CUDA_HOME"] == str(site / "nvidia" / "cuda_runtime")


def test_dlpack_producer(gemm):
    class Producer:
        """Something that only speaks DLPack."""

        def __init__(self, x):
            self.x = x

        def __dlpack__(self, stream=None):
            return self.x.__dlpack__()

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    a, b, c = operands(40, 24, 16)
    gemm(Producer(a), Producer(b), Producer(c))
    check_gemm(a, b, c)


class _DLPack1:
    """A DLPack 1 producer over a NumPy array, with the flags given
    (DLPACK_FLAG_BITMASK_READ_ONLY is 1): the capsule made by hand, so
    that any NumPy will do.  Asked without max_version it gives the
    first DLPack's capsule, which has no flags."""
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

    def __init__(self, x, flags):
        from tilec import _arrays
        self.x = x
        self.shape = (ctypes.c_int64 * x.ndim)(*x.shape)
        t = _arrays._DLTensor()
        t.data = x.__array_interface__["data"][0]
        t.device.device_type = _arrays.DL_CPU
        t.ndim = x.ndim
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 32, 1
        t.shape = self.shape
        self.m = _arrays._DLManagedTensorVersioned(1, 0, None, None, flags,
                                                   t)
        self.t = t

    def __dlpack__(self, stream=None, max_version=None, dl_device=None,
                   copy=None):
        if max_version and max_version[0] >= 1:
            return self.new(ctypes.addressof(self.m), b"dltensor_versioned",
                            None)
        return self.new(ctypes.addressof(self.t), b"dltensor", None)

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("path", ["call", "ctypes"])
def test_read_only_arrays_are_refused_as_outputs(path):
    """A read-only array for a tensor the kernel writes (C) is a
    ValueError naming it, and nothing is written: immutable bytes stayed
    unchanged, a read-only memmap crashed the process.  For const
    tensors (A, B) read-only arrays are fine."""
    gemm = build(GEMM)
    if path == "ctypes":
        def call(*args, **kwargs):
            return gemm._call_ctypes(args, kwargs)
    else:
        call = gemm
    a, b, c = operands(9, 8, 7)
    c.setflags(write=False)
    with pytest.raises(ValueError, match=r"tensor 'C'.*the kernel writes "
                       r"this tensor.*read-only"):
        call(a, b, c)
    with pytest.raises(ValueError, match=r"tensor 'C'.*read-only"):
        # A strided view: __array_struct__ describes it.
        call(C=c[:, ::2], A=a, B=np.ascontiguousarray(b[:, ::2]))
    assert np.isnan(c).all()
    frozen = bytes(9 * 8 * 4)
    with pytest.raises(ValueError, match=r"tensor 'C'.*read-only"):
        call(a, b, np.frombuffer(frozen, np.float32).reshape(9, 8))
    assert frozen == bytes(9 * 8 * 4)
    mapped = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                          "tilec-read-only-%d.bin" % os.getpid())
    np.zeros((9, 8), np.float32).tofile(mapped)
    try:
        m = np.memmap(mapped, np.float32, mode="r", shape=(9, 8))
        with pytest.raises(ValueError, match=r"tensor 'C'.*read-only"):
            call(a, b, m)
        del m
    finally:
        os.unlink(mapped)
    with pytest.raises(ValueError, match=r"tensor 'C'.*read-only"):
        call(a, b, _DLPack1(np.full((9, 8), np.nan, np.float32), 1))
    a.setflags(write=False)
    b.setflags(write=False)
    c = np.full((9, 8), np.nan, np.float32)
    call(a, b, c)
    check_gemm(a, b, c)
    c = np.full((9, 8), np.nan, np.float32)
    call(_DLPack1(a, 1), _DLPack1(b, 1), _DLPack1(c, 0))
    check_gemm(a, b, c)


def test_expression_extents_and_float_scalar():
    pack = build(TWO, kernel="pack")
    x = rng.uniform(-1, 1, (37, 14)).astype(np.float32)
    y = np.full_like(x, np.nan)
    with pytest.raises(TypeError, match=r"missing argument 'N'"):
        pack(shift=0.5, X=x, Y=y)
    pack(7, 0.25, x, y)
    assert np.array_equal(y, x + np.float32(0.25))
    with pytest.raises(ValueError, match=r"\(2 \* N\) = 12"):
        pack(6, 0.25, x, y)


@needs_translator
def test_translation_errors_carry_the_caret():
    text = ("#include <tilec.h>\n"
            "TILE_KERNEL void\n"
            "k(int N, const f32 X[N], f32 Y[N])\n"
            "{\n"
            "\tint b = tile_grid_x(N);\n"
            "\ttile_fragment f32 x[16];\n"
            "\ttile_copy(x, &X[b * 16]);\n"
            "\ttile_copy(&Y[b * 16], undefined_name);\n"
            "}\n")
    with pytest.raises(tilec.TranslationError) as e:
        tilec.compile(text)
    msg = str(e.value)
    assert "<string>:8:" in msg and "error:" in msg and "^" in msg
    with pytest.raises(tilec.TranslationError):
        tilec.translate(text)


def test_two_kernels_need_a_name():
    with pytest.raises(ValueError, match=r"2 kernels \(tail, pack\)"):
        build(TWO)


@needs_translator
def test_bad_target_and_define():
    with pytest.raises(ValueError, match=r"target"):
        tilec.compile(GEMM, target="fpga")
    with pytest.raises(TypeError, match=r"BLOCK_M"):
        tilec.translate(GEMM, defines={"BLOCK_M": "big"})
    # 2**64 + 64 would reach the translator as 64 through ctypes.
    with pytest.raises(ValueError, match=r"BLOCK_M.*does not fit in 64 bits"):
        tilec.translate(GEMM, defines={"BLOCK_M": 2 ** 64 + 64})


# --- tilec.load: generated code and its launch document, without the
# translator ---------------------------------------------------------------

def test_load_takes_text_files_and_dicts(tmp_path):
    import json
    src, doc = translated(GEMM)
    (tmp_path / "gemm_f32.c").write_text(src)
    (tmp_path / "gemm_f32.launch.json").write_text(doc)
    compiled = build(GEMM)
    one = json.loads(doc)["kernels"][0]  # a tuning farm's `launch`
    for source, manifest in ((src, doc),
                             (str(tmp_path / "gemm_f32.c"),
                              tmp_path / "gemm_f32.launch.json"),
                             (tmp_path / "gemm_f32.c", json.loads(doc)),
                             (src, one)):
        k = tilec.load(source, manifest)
        assert (k.name, k.target, k.params) == ("gemm_f32", "openmp",
                                                compiled.params)
        assert k.manifest == compiled.manifest and k.source == src
        a, b, c = operands(45, 29, 17)
        k(a, b, c)
        check_gemm(a, b, c)


@needs_translator
def test_load_finds_included_headers(tmp_path):
    """Plain (not standalone) output includes tilec/cpu/...: found beside
    a source file, in a directory given, or given by name."""
    src = tilec.translate(GEMM)
    doc = tilec.translate(GEMM, emit="launch")
    assert '#include "tilec/cpu/tilec_cpu.h"' in src
    with pytest.raises(tilec.RuntimeError, match=r"tilec/cpu/.*No such file"):
        tilec.load(src, doc)
    inc = tmp_path / "inc"
    texts = {}
    for name in ("gemm.h", "tilec_cpu.h"):
        texts["tilec/cpu/" + name] = open(os.path.join(
            ROOT, "templates", "cpu", name)).read()
        (inc / "tilec" / "cpu").mkdir(parents=True, exist_ok=True)
        (inc / "tilec" / "cpu" / name).write_text(texts["tilec/cpu/" + name])
    (inc / "gemm_f32.c").write_text(src)
    for k in (tilec.load(inc / "gemm_f32.c", doc),
              tilec.load(src, doc, headers=inc),
              tilec.load(src, doc, headers=texts)):
        a, b, c = operands(38, 21, 70)
        k(a, b, c)
        check_gemm(a, b, c)


def test_load_refuses_what_does_not_fit(tmp_path):
    import json
    src, doc = translated(GEMM)
    with pytest.raises(ValueError, match=r"manifest: not JSON"):
        tilec.load(src, "{not json")
    with pytest.raises(ValueError, match=r"not a launch document"):
        tilec.load(src, {"format": "tilec-launch/0", "kernels": []})
    with pytest.raises(ValueError, match=r"no kernel 'gemm'.*gemm_f32"):
        tilec.load(src, doc, kernel="gemm")
    with pytest.raises(ValueError, match=r"translated for openmp, not cuda"):
        tilec.load(src, doc, target="cuda")
    with pytest.raises(FileNotFoundError, match=r"no launch document"):
        tilec.load(src, str(tmp_path / "missing.json"))
    with pytest.raises(FileNotFoundError, match=r"no generated source"):
        tilec.load(str(tmp_path / "missing.c"), doc)
    with pytest.raises(TypeError, match=r"headers"):
        tilec.load(src, doc, headers=3)
    # The runtime reads the document itself: a parameter it cannot take.
    bad = json.loads(doc)
    bad["kernels"][0]["params"][3]["dtype"] = "f128"
    with pytest.raises(tilec.RuntimeError, match=r"f128"):
        tilec.load(src, bad)
    # A document for a kernel the source does not define.
    pack_doc = translated(TWO, kernel="pack")[1]
    with pytest.raises(tilec.RuntimeError, match=r"pack"):
        tilec.load(src, pack_doc)
    # sm_90a code (wgmma, TMA) compiles for sm_90a alone; refused before
    # any GPU is asked.
    cu = translated(SOFTMAX, target="cuda")[1]
    with pytest.raises(ValueError, match=r"translated for sm_90a.*sm_80"):
        tilec.load("// nothing\n", cu, arch="sm_80")


def test_where_libtilec_cannot_load():
    """The machine itself lacks the translator (a GPU machine without
    libclang): translate and compile say what to do, tilec.load's
    kernels run, and neither libtilec nor libclang is in the process."""
    if HAVE_TRANSLATOR:
        pytest.skip("libtilec loads here (test_runtime_alone simulates "
                    "its absence)")
    for call in (lambda: tilec.translate(GEMM),
                 lambda: tilec.compile(GEMM)):
        with pytest.raises(tilec.TranslatorUnavailable,
                           match=r"(?s)libtilec.*tilec\.load"):
            call()
    k = load_translated(GEMM)
    a, b, c = operands(29, 31, 37)
    k(a, b, c)
    check_gemm(a, b, c)
    with open("/proc/self/maps") as f:
        maps = f.read()
    assert "libtilec.so" not in maps and "libclang" not in maps


STUB_LIBCLANG = "libtilec-test-missing-libclang.so"
CHILD = r"""
import ctypes, json, os, sys
import numpy as np
import tilec
from tilec import _lib
# Only TILEC_LIBRARY_DIR: an installed libtilec elsewhere would be found.
_lib._candidates = lambda stem: [os.path.join(
    os.environ["TILEC_LIBRARY_DIR"], "lib%s.so" % stem)]
d = sys.argv[1]
k = tilec.load(os.path.join(d, "gemm_f32.c"),
               os.path.join(d, "gemm_f32.launch.json"))
rng = np.random.default_rng(7)
a = rng.uniform(-1, 1, (33, 19)).astype(np.float32)
b = rng.uniform(-1, 1, (19, 41)).astype(np.float32)
c = np.full((33, 41), np.nan, np.float32)
k(a, b, c)
want = a.astype(np.float64) @ b.astype(np.float64)
err = float(np.abs(c - want).max())
try:
    k(a, b[:-1], c)
    shape_error = None
except ValueError as e:
    shape_error = str(e)
maps = open("/proc/self/maps").read()
out = {"err": err, "nan": bool(np.isnan(c).any()),
       "shape_error": shape_error,
       "available": tilec.translator_available(),
       "loaded": [n for n in ("libtilec.so", "libclang") if n in maps]}
for name, call in (("translate", lambda: tilec.translate(sys.argv[2])),
                   ("compile", lambda: tilec.compile(sys.argv[2]))):
    try:
        call()
        out[name] = None
    except tilec.TranslatorUnavailable as e:
        out[name] = str(e)
print(json.dumps(out))
"""


@needs_translator
@pytest.mark.parametrize("libtilec", ["absent", "without-libclang"])
def test_runtime_alone(tmp_path, libtilec):
    """Where libtilec is absent, or present but unloadable (its libclang
    missing, as on a GPU machine without it): import tilec and tilec.load
    work on libtilec_runtime alone, translate and compile raise
    TranslatorUnavailable saying what to do, and nothing loads
    libtilec."""
    import shutil
    lib = tmp_path / "lib"
    lib.mkdir()
    built = os.environ.get("TILEC_LIBRARY_DIR") or os.path.join(ROOT,
                                                                "build")
    shutil.copy(os.path.join(built, "libtilec_runtime.so"),
                lib / "libtilec_runtime.so")
    if libtilec == "without-libclang":
        # A libtilec.so that needs a library that is not there.
        c = tmp_path / "stub.c"
        c.write_text("int tilec_stub_clang(void);\n"
                     "int tilec_stub(void) { return tilec_stub_clang(); }\n")
        dep = tmp_path / STUB_LIBCLANG
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(dep), "-x", "c",
                        "-"], input="int tilec_stub_clang(void) "
                       "{ return 0; }\n", text=True, check=True)
        subprocess.run(["cc", "-shared", "-fPIC", "-o",
                        str(lib / "libtilec.so"), str(c), str(dep)],
                       check=True)
        dep.unlink()
    kernels = tmp_path / "k"
    kernels.mkdir()
    (kernels / "gemm_f32.c").write_text(tilec.translate(GEMM,
                                                        standalone=True))
    (kernels / "gemm_f32.launch.json").write_text(
        tilec.translate(GEMM, emit="launch"))
    env = dict(os.environ, TILEC_LIBRARY_DIR=str(lib),
               PYTHONPATH=os.pathsep.join(
                   [os.path.join(ROOT, "python")] +
                   os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    env.pop("LD_LIBRARY_PATH", None)
    r = subprocess.run([sys.executable, "-c", CHILD, str(kernels), GEMM],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import json
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert not out["nan"] and out["err"] <= 1e-5
    assert "'K'" in out["shape_error"] and "'B'" in out["shape_error"]
    assert out["available"] is False and out["loaded"] == []
    for name in ("translate", "compile"):
        msg = out[name]
        assert msg and "libtilec" in msg and "tilec.load" in msg
        assert str(lib / "libtilec.so") in msg
        if libtilec == "without-libclang":
            assert STUB_LIBCLANG in msg


# --- torch, where installed ----------------------------------------------------

def _torch():
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed here (pip install torch)")
    return torch


def test_torch_cpu(gemm):
    torch = _torch()
    a, b, c = (torch.from_numpy(x) for x in operands())
    gemm(a, b, c)
    check_gemm(a.numpy(), b.numpy(), c.numpy())
    with pytest.raises(ValueError, match=r"tensor 'A' is not row-major"):
        gemm(a.t().contiguous().t(), b, c)


def test_torch_cuda():
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    k = build(SOFTMAX, target="cuda")
    x = torch.randn(333, 1000, device="cuda")
    y = torch.full_like(x, float("nan"))
    k(x, y)
    torch.cuda.synchronize()
    assert torch.allclose(y, torch.softmax(x, dim=1), rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match=r"tensor 'X' is in host memory"):
        k(x.cpu(), y)
    # Under CUDA graph capture: the launch goes on the capturing stream.
    y.fill_(float("nan"))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        k(x, y)
    g.replay()
    torch.cuda.synchronize()
    assert torch.allclose(y, torch.softmax(x, dim=1), rtol=1e-4, atol=1e-6)


def test_f16_rmsnorm_with_a_float_scalar():
    k = build(os.path.join(ROOT, "samples", "rmsnorm.c"))
    x = rng.uniform(-1, 1, (13, 300)).astype(np.float16)
    w = rng.uniform(0.5, 1.5, 300).astype(np.float16)
    y = np.full_like(x, np.nan)
    k(x, w, y, eps=1e-5)
    xd = x.astype(np.float64)
    want = xd / np.sqrt((xd * xd).mean(axis=1, keepdims=True) + 1e-5) * w
    assert np.abs(y.astype(np.float64) - want).max() <= 1e-2 * np.abs(want).max()


# --- tilec.bench ---------------------------------------------------------------

def test_bench_times_the_kernel_and_the_other(gemm):
    a, b, c = operands(64, 48, 40)
    calls = []

    def matmul(A, B, C):
        calls.append(1)
        np.matmul(A, B, out=C)

    r = tilec.bench(gemm, A=a, B=b, C=c, warmup=2, repeat=7)
    check_gemm(a, b, c)  # what the kernel left, not NumPy
    assert r.against is None and r.ratio is None
    assert len(r.kernel.times) == 7 and min(r.kernel.times) > 0
    assert r.kernel.min <= r.kernel.q1 <= r.kernel.median <= r.kernel.q3
    assert str(r).startswith("gemm_f32 (openmp) ") and "n=7" in str(r)

    r = tilec.bench(gemm, a, b, c, against=matmul, warmup=1, repeat=5)
    assert len(calls) == 1 + 5
    assert len(r.against.times) == 5
    assert r.ratio == pytest.approx(r.kernel.median / r.against.median)
    line = str(r)
    assert line.count(" | ") == 2 and "matmul" in line
    assert line.endswith("%.2fx" % r.ratio)


def test_bench_bad_calls(gemm):
    a, b, c = operands()
    with pytest.raises(TypeError, match=r"kernel: a tilec.Kernel"):
        tilec.bench(np.matmul, a, b, c)
    with pytest.raises(TypeError, match=r"against: a callable"):
        tilec.bench(gemm, a, b, c, against="numpy")
    with pytest.raises(ValueError, match=r"repeat: an integer >= 1"):
        tilec.bench(gemm, a, b, c, repeat=0)
    with pytest.raises(ValueError, match=r"warmup: an integer >= 0"):
        tilec.bench(gemm, a, b, c, warmup=-1)
    # The kernel's own checks, from the first call.
    with pytest.raises(TypeError, match=r"tensor 'A'.*f64"):
        tilec.bench(gemm, a.astype(np.float64), b, c)
    assert np.isnan(c).all()


# --- tilec.torch_op --------------------------------------------------------------

def test_torch_op_parameters(gemm):
    """What the operator takes and writes, decided before torch is
    needed."""
    from tilec._torch import op_params
    assert op_params(gemm) == ([("A", "tensor"), ("B", "tensor"),
                                ("C", "tensor")], ["C"])
    pack = build(TWO, kernel="pack")
    # N is no tensor's extent (2 * N is): the operator takes it.
    assert op_params(pack, outputs="Y") == (
        [("N", "int"), ("shift", "float"), ("X", "tensor"),
         ("Y", "tensor")], ["Y"])
    with pytest.raises(ValueError, match=r"no tensor parameter 'M'"):
        tilec.torch_op(gemm, "tilec_test::bad", outputs=["M"])
    with pytest.raises(ValueError, match=r"'namespace::op_name'"):
        tilec.torch_op(gemm, "gemm")


def test_torch_op_under_torch_compile(gemm):
    torch = _torch()
    op = tilec.torch_op(gemm, "tilec_test::gemm_f32")

    def f(a, b):
        c = torch.empty(a.shape[0], b.shape[1])
        op(a, b, c)
        return c * 2

    a, b, c = (torch.from_numpy(x) for x in operands())
    want = 2 * (a.double() @ b.double())
    # aot_eager: dynamo, functionalization and the fake kernel, without
    # inductor's C++ compiler (the CUDA case below takes inductor).
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(a, b)
    assert torch.allclose(got.double(), want, rtol=1e-5, atol=1e-5)
    c.fill_(float("nan"))
    op(a, b, c)  # eager, in place
    check_gemm(a.numpy(), b.numpy(), c.numpy())
    if torch.cuda.is_available():
        k = build(SOFTMAX, target="cuda")
        sop = tilec.torch_op(k, "tilec_test::softmax")

        def g(x):
            y = torch.empty_like(x)
            sop(x, y)
            return y + 1

        x = torch.randn(333, 1000, device="cuda")
        got = torch.compile(g, fullgraph=True)(x)
        assert torch.allclose(got, torch.softmax(x, dim=1) + 1, rtol=1e-4,
                              atol=1e-6)


def test_bench_cuda_events():
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    k = build(SOFTMAX, target="cuda")
    x = torch.randn(1024, 4096, device="cuda")
    y = torch.full_like(x, float("nan"))
    r = tilec.bench(k, x, y, against=lambda X, Y: torch.softmax(X, dim=1),
                    repeat=10)
    torch.cuda.synchronize()
    assert torch.allclose(y, torch.softmax(x, dim=1), rtol=1e-4, atol=1e-6)
    assert len(r.kernel.times) == 10 and r.kernel.min > 0
    assert len(r.against.times) == 10 and r.against.min > 0
    assert str(r).startswith("softmax (cuda) ")
