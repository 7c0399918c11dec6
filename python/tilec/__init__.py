"""tilec from Python: translate tile programs, compile them and call the
kernels on NumPy arrays, torch tensors (CPU and CUDA) and DLPack producers.

    import numpy as np, tilec
    gemm = tilec.compile("samples/gemm_f32.c")        # target="openmp"
    gemm(A, B, C)                                      # M, N, K inferred

The binding is ctypes over libtilec and libtilec_runtime (python/README.md
says why).  Every check of the arguments against the kernel's signature
happens in the runtime's tilec_launch_checked, the same for C callers;
this module only describes the arrays to it.
"""
import ctypes
import json
import os
import threading

from . import _arrays, _lib

__all__ = ["translate", "compile", "Kernel", "bench", "BenchResult",
           "torch_op", "TranslationError", "RuntimeError", "NotFound",
           "__version__"]
__version__ = "0.1.0"

NotFound = _lib.NotFound
TARGETS = ("openmp", "cuda", "hip")


class TranslationError(Exception):
    """The tile program has errors.  str() is the translator's located
    diagnostics (file:line:col: error: ..., the line, a caret)."""

    def __init__(self, diagnostics):
        super().__init__(diagnostics)
        self.diagnostics = diagnostics


class RuntimeError(RuntimeError):  # noqa: A001  tilec.RuntimeError
    """Compiling, loading or launching failed (the runtime's message,
    with the compiler's log)."""


def _text(b):
    return b.decode("utf-8", "replace") if b else ""


def _source(path_or_text):
    """(path, text): a str with a newline (or a '{') is program text, any
    other str or PathLike a file."""
    if isinstance(path_or_text, os.PathLike):
        return os.fspath(path_or_text), None
    if not isinstance(path_or_text, str):
        raise TypeError("path_or_text: a file name or the program's text, "
                        "not %s" % type(path_or_text).__name__)
    if "\n" in path_or_text or "{" in path_or_text:
        return "<string>", path_or_text
    if not os.path.exists(path_or_text):
        raise FileNotFoundError("tilec: no tile program at %r" % path_or_text)
    return path_or_text, None


class _Translator:
    """A tilec_translator with the bindings given."""

    def __init__(self, target, arch, defines, config, kernel):
        if target not in TARGETS:
            raise ValueError("target: one of %s, not %r" % (
                ", ".join(TARGETS), target))
        rt, self.lib = _lib.libs()
        self.tr = self.lib.tilec_translator_new()
        if not self.tr:
            raise MemoryError("tilec_translator_new")
        if self.lib.tilec_translator_set_target(
                self.tr, target.encode(), arch.encode() if arch else None):
            self._raise(ValueError)
        for name, value in (defines or {}).items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("defines[%r]: an integer, not %r" % (name,
                                                                     value))
            if self.lib.tilec_translator_define(self.tr, name.encode(), value):
                self._raise(ValueError)
        if config is not None and self.lib.tilec_translator_set_config(
                self.tr, os.fspath(config).encode()):
            self._raise(ValueError)
        if kernel is not None and self.lib.tilec_translator_set_kernel(
                self.tr, kernel.encode()):
            self._raise(ValueError)

    def diagnostics(self):
        return _text(self.lib.tilec_translator_diagnostics(self.tr))

    def _raise(self, cls):
        raise cls(self.diagnostics().strip() or "tilec: invalid argument")

    def translate(self, path, text):
        if text is None:
            st = self.lib.tilec_translate_file(self.tr, path.encode())
        else:
            data = text.encode()
            st = self.lib.tilec_translate_string(self.tr, path.encode(), data,
                                                 len(data))
        if st == _lib.ERR_COMPILE:
            raise TranslationError(self.diagnostics())
        if st:
            raise OSError(self.diagnostics().strip())
        n = ctypes.c_size_t()
        out = self.lib.tilec_translator_output(self.tr, ctypes.byref(n))
        return out[:n.value].decode("utf-8", "replace")

    def __del__(self):
        if getattr(self, "tr", None):
            self.lib.tilec_translator_free(self.tr)
            self.tr = None


def translate(path_or_text, target="openmp", arch=None, defines=None,
              config=None, kernel=None):
    """The target source tilec writes for a tile program (a file name or
    its text): as `tilec FILE -t TARGET --arch ARCH -D NAME=VALUE
    --config RECORD --kernel NAME`.  TranslationError on errors in the
    program."""
    path, text = _source(path_or_text)
    return _Translator(target, arch, defines, config,
                       kernel).translate(path, text)


class _Context:
    """One runtime context per (backend, device), kept for the process."""
    _open = {}

    @classmethod
    def get(cls, target, device):
        key = (target, device)
        if key not in cls._open:
            rt, _ = _lib.libs()
            if target == "cuda":
                _arrays.find_cuda_toolkit()
            err = _lib.InitError()
            backend = rt.tilec_backend_from_name(target.encode())
            ctx = rt.tilec_context_new(backend, device, ctypes.byref(err))
            if not ctx:
                raise RuntimeError("tilec: no %s context: %s%s" % (
                    target, _text(err.message),
                    _arrays.nvrtc_note() if target == "cuda" else ""))
            cache = os.environ.get("TILEC_CACHE_DIR")
            if cache is not None:
                rt.tilec_set_cache_dir(ctx, cache.encode())
            cls._open[key] = ctx
        return cls._open[key]


class Kernel:
    """A compiled kernel.  Call it with the kernel's parameters, by
    position or by name: tensors as NumPy arrays, torch tensors or DLPack
    producers, scalars as Python numbers.  Positional arguments are
    either all the parameters or the ones that cannot be inferred; the
    scalars that are tensor extents are taken from the shapes when left
    out.  A mismatch with the signature raises TypeError (an argument of
    the wrong kind or dtype, missing or extra ones) or ValueError (shape,
    rank, strides, device, value range), naming the parameter.

    Attributes: name, target, source (the generated code), manifest (the
    kernel's object of its launch document, docs/launch.md), params (its
    parameter names)."""

    def __init__(self, ctx, mod, k, name, target, device, source, manifest):
        self._rt, _ = _lib.libs()
        self._ctx, self._mod, self._k = ctx, mod, k
        self.name, self.target, self.device = name, target, device
        self.source, self.manifest = source, manifest
        self.params = [p["name"] for p in manifest["params"]]
        self._launch = self._rt.tilec_launch_checked
        self._kp = ctypes.c_void_p(k)
        self._gpu = target != "openmp"
        self._names = {}
        self._local = threading.local()

    def __repr__(self):
        return "<tilec.Kernel %s(%s) for %s>" % (self.name,
                                                 ", ".join(self.params),
                                                 self.target)

    def _scratch(self, n):
        """This thread's tilec_arg array for n arguments, its elements and
        their buffers, made on the first call with n arguments and reused
        after (every field a call needs is set by the call)."""
        per_n = getattr(self._local, "per_n", None)
        if per_n is None:
            per_n = self._local.per_n = {}
        s = per_n.get(n)
        if s is None:
            arr = (_lib.Arg * max(n, 1))()
            views = [arr[i] for i in range(n)]
            for a in views:
                a.size = ctypes.sizeof(_lib.Arg)
            s = per_n[n] = (arr, views, [_arrays.Slot(a) for a in views])
        return s

    def __call__(self, *args, **kwargs):
        n = len(args) + len(kwargs)
        arr, views, slots = self._scratch(n)
        notes, keep = [], []
        kinds, describer = _arrays.KINDS, _arrays.describer
        i = 0
        for value in args:
            a = views[i]
            a.name = None
            (kinds.get(type(value)) or describer(value, a))(
                a, slots[i], value, notes, keep)
            i += 1
        for name, value in kwargs.items():
            a = views[i]
            b = self._names.get(name)
            if b is None:
                b = self._names[name] = name.encode()
            a.name = b
            (kinds.get(type(value)) or describer(value, a))(
                a, slots[i], value, notes, keep)
            i += 1
        stream = None
        if self._gpu:
            stream = _arrays.current_stream(args + tuple(kwargs.values()))
        st = self._launch(self._kp, arr, n, stream)
        if st == _lib.OK:
            return None
        msg = _text(self._rt.tilec_error(self._ctx))
        if notes:
            msg += " (given %s)" % "; ".join(notes)
        if st == _lib.ERR_INVALID:
            problem = self._rt.tilec_launch_problem(self._kp)
            cls = TypeError if problem == _lib.PROBLEM_TYPE else ValueError
            raise cls(msg)
        raise RuntimeError(msg)

    def __del__(self):
        if getattr(self, "_mod", None):
            self._rt.tilec_module_free(self._mod)
            self._mod = None


def compile(path_or_text, target="openmp", arch=None, defines=None,
            config=None, kernel=None, device=0):
    """Translate a tile program (a file name or its text) for `target`
    ("openmp", "cuda", "hip"), compile it through the runtime's disk
    cache and return its kernel (`kernel`, or the program's only one) as
    a callable Kernel.  `arch` defaults to the machine's (the host's
    vector ISA; the GPU's); `defines` binds tunables ({"BLOCK_M": 64}),
    `config` is a tuning record to replay.  TranslationError for errors
    in the program; tilec.RuntimeError when compiling or loading fails."""
    path, text = _source(path_or_text)
    t = _Translator(target, arch, defines, config, kernel)
    # Translated here first, so that errors in the program are told
    # apart from the runtime's (and the kernel found when not named).
    t.translate(path, text)
    if kernel is None:
        names = [k["kernel"] for k in json.loads(
            _text(t.lib.tilec_translator_manifest(t.tr)))["kernels"]]
        if len(names) != 1:
            raise ValueError("kernel: the program has %d kernels (%s); say "
                             "which" % (len(names), ", ".join(names)))
        kernel = names[0]
    ctx = _Context.get(target, device)
    mod = ctypes.c_void_p()
    data = text.encode() if text is not None else None
    k = t.lib.tilec_jit(ctx, t.tr, path.encode(), data,
                        len(data) if data else 0, kernel.encode(), None,
                        ctypes.byref(mod))
    if not k:
        raise RuntimeError(t.diagnostics().strip())
    doc = json.loads(_text(t.lib.tilec_translator_manifest(t.tr)))
    manifest = next(k2 for k2 in doc["kernels"] if k2["kernel"] == kernel)
    n = ctypes.c_size_t()
    source = t.lib.tilec_translator_output(t.tr, ctypes.byref(n))
    return Kernel(ctx, mod, k, kernel, target, device,
                  source[:n.value].decode("utf-8", "replace"), manifest)


from ._bench import BenchResult, bench  # noqa: E402  (uses Kernel)
from ._torch import torch_op  # noqa: E402
