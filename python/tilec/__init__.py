"""tilec from Python: translate tile programs, compile them and call the
kernels on NumPy arrays, torch tensors (CPU and CUDA) and DLPack producers.

    import numpy as np, tilec
    gemm = tilec.compile("samples/gemm_f32.c")        # target="openmp"
    gemm(A, B, C)                                      # M, N, K inferred

Where the translator is absent (it links libclang), tilec.load takes code
translated elsewhere with its launch document and returns the same
Kernel:

    k = tilec.load("softmax.cu", "softmax.launch.json")   # target="cuda"

The binding is ctypes over libtilec and libtilec_runtime (python/README.md
says why), with an optional C extension (tilec._fast) that makes a
kernel call's description and launch one C call where it was built;
libtilec is loaded only when translate or compile is called.
Every check of the arguments against the kernel's signature happens in
the runtime's tilec_launch_checked, the same for C callers; this module
only describes the arrays to it.
"""
import ctypes
import json
import os
import re
import threading

from . import _arrays, _lib

__all__ = ["translate", "compile", "load", "Kernel", "Dispatch", "bench",
           "BenchResult",
           "torch_op", "translator_available", "call_path", "TranslationError",
           "RuntimeError", "NotFound", "TranslatorUnavailable",
           "__version__"]
__version__ = "0.1.0"

NotFound = _lib.NotFound
TranslatorUnavailable = _lib.TranslatorUnavailable
translator_available = _lib.translator_available
TARGETS = ("openmp", "cuda", "hip")
# The file extension that picks the compiler's language (the runtime
# compiles .c as C, .cu and .hip as C++).
EXTENSIONS = {"openmp": ".c", "cuda": ".cu", "hip": ".hip"}
LAUNCH_FORMAT = "tilec-launch/1"


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

    def __init__(self, target, arch, defines, config, kernel,
                 standalone=False):
        if target not in TARGETS:
            raise ValueError("target: one of %s, not %r" % (
                ", ".join(TARGETS), target))
        self.lib = _lib.translator()
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
            _check_int64("defines[%r]" % name, value)
            if self.lib.tilec_translator_define(self.tr, name.encode(), value):
                self._raise(ValueError)
        if config is not None and self.lib.tilec_translator_set_config(
                self.tr, os.fspath(config).encode()):
            self._raise(ValueError)
        if kernel is not None and self.lib.tilec_translator_set_kernel(
                self.tr, kernel.encode()):
            self._raise(ValueError)
        if standalone and self.lib.tilec_translator_set_flags(
                self.tr, _lib.STANDALONE):
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
              config=None, kernel=None, standalone=False, emit="source"):
    """The target source tilec writes for a tile program (a file name or
    its text): as `tilec FILE -t TARGET --arch ARCH -D NAME=VALUE
    --config RECORD --kernel NAME`, with `standalone` as --standalone
    (the helper headers inlined: what tilec.load compiles without
    headers).  emit="launch" returns the launch document instead (JSON
    text, as --emit=launch; docs/launch.md).  TranslationError on errors
    in the program; TranslatorUnavailable where libtilec cannot be
    loaded."""
    if emit not in ("source", "launch"):
        raise ValueError("emit: 'source' or 'launch', not %r" % (emit,))
    path, text = _source(path_or_text)
    t = _Translator(target, arch, defines, config, kernel, standalone)
    source = t.translate(path, text)
    if emit == "launch":
        return _text(t.lib.tilec_translator_manifest(t.tr))
    return source


def _load_accelerator():
    """tilec._fast, the optional C extension that describes a call's
    arguments and launches in one C call (python/README.md), set up with
    _arrays' tables; None where it was not built, where
    TILEC_PYTHON_CTYPES is set (to anything but 0) or where it was built
    for another tilec_arg than _lib.Arg: then Kernel calls go through
    ctypes alone, with the same checks and errors."""
    if os.environ.get("TILEC_PYTHON_CTYPES", "0") != "0":
        return None
    try:
        from . import _fast
    except ImportError:
        return None
    want = (ctypes.sizeof(_lib.Arg),) + tuple(
        getattr(_lib.Arg, f).offset for f, _ in _lib.Arg._fields_)
    if tuple(_fast.arg_layout()) != want:
        return None
    _fast.setup(_arrays.KINDS, _arrays._kind, _arrays._torch,
                (_arrays._numpy_fast, _arrays._numpy), _arrays._torch_dtype,
                _arrays._numpy_dtype, _arrays.stream_of)
    return _fast


_accel = _load_accelerator()
# How Kernel calls go: "extension" (tilec._fast) or "ctypes".
call_path = "extension" if _accel is not None else "ctypes"


class _Context:
    """One runtime context per (backend, device), kept for the process."""
    _open = {}

    @classmethod
    def get(cls, target, device):
        key = (target, device)
        if key not in cls._open:
            rt = _lib.runtime()
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
        self._rt = _lib.runtime()
        self._ctx, self._mod, self._k = ctx, mod, k
        self.name, self.target, self.device = name, target, device
        self.source, self.manifest = source, manifest
        self.params = [p["name"] for p in manifest["params"]]
        self._launch = _lib.launch_checked
        self._kp = ctypes.c_void_p(k)
        self._kaddr = self._kp.value
        self._gpu = target != "openmp"
        self._names = {}
        self._local = threading.local()
        # The C accelerator's launch of this kernel, or None (ctypes).
        self._fast = None
        if _accel is not None:
            self._fast = _accel.Launcher(
                ctypes.cast(self._launch, ctypes.c_void_p).value,
                self._kaddr, self._gpu).launch

    def __repr__(self):
        return "<tilec.Kernel %s(%s) for %s>" % (self.name,
                                                 ", ".join(self.params),
                                                 self.target)

    def _scratch(self, n):
        """This thread's tilec_arg array for n arguments (its address;
        the Slots keep it) and its Slots, made on the first call with n
        arguments and reused after (a call writes every field of every
        argument it passes)."""
        per_n = getattr(self._local, "per_n", None)
        if per_n is None:
            per_n = self._local.per_n = {}
        s = per_n.get(n)
        if s is None:
            arr = (_lib.Arg * max(n, 1))()
            s = per_n[n] = (ctypes.addressof(arr),
                             [_arrays.Slot(arr, i) for i in range(max(n, 1))])
        return s

    def _name(self, name):
        """The address of `name`'s bytes (kept here for the kernel's
        life) for tilec_arg.name."""
        b = name.encode()
        addr = ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p).value
        self._names[name] = (b, addr)
        return self._names[name]

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None:
            st = fast(args, kwargs)
            if not st:  # TILEC_OK
                return None
            if st > 0:
                self._fail(st, ())
            # NOT_HERE: an argument the extension leaves to ctypes.
        return self._call_ctypes(args, kwargs)

    def _call_ctypes(self, args, kwargs):
        """The call through ctypes: each argument described by
        _arrays.py into this thread's tilec_arg array, then
        tilec_launch_checked."""
        n = len(args) + len(kwargs)
        try:
            args_at, slots = self._local.per_n[n]
        except (AttributeError, KeyError):
            args_at, slots = self._scratch(n)
        notes, keep = [], []
        kinds, describer = _arrays.KINDS, _arrays.describer
        gpu = None
        try:
            for slot, value in zip(slots, args):
                g = (kinds.get(type(value)) or describer(value, None))(
                    slot, 0, value, notes, keep)
                if gpu is None:
                    gpu = g
            if kwargs:
                names = self._names
                for slot, (name, value) in zip(slots[len(args):],
                                               kwargs.items()):
                    b = names.get(name) or self._name(name)
                    g = (kinds.get(type(value)) or describer(value, name))(
                        slot, b[1], value, notes, keep)
                    if gpu is None:
                        gpu = g
        except _arrays.Unfit as e:
            raise ValueError("%s: %s" % (_arrays.unfit(args, kwargs),
                                         e)) from None
        # On a GPU, the current stream of the GPU of the first torch
        # tensor on one (None, the default stream, when there is none).
        stream = None
        if gpu is not None and self._gpu:
            stream = _arrays.stream_of(gpu)
        st = self._launch(self._kaddr, args_at, n, stream)
        if st:  # not TILEC_OK
            self._fail(st, notes)
        return None

    def _fail(self, st, notes):
        """Raise the failed launch's error: TypeError or ValueError for
        arguments the runtime refused (its message names the parameter;
        `notes` adds what arrays it could not describe were),
        tilec.RuntimeError for anything else."""
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


class Dispatch:
    """One kernel compiled once per tuning record (records tuned at
    different shapes), called like a Kernel: each call takes the record
    whose shape bucket holds the call's integer scalars (given, or taken
    from the tensors' shapes as a Kernel takes them), by the rule of
    `tilec export`'s entry point and `tilec run --config A --config B`
    (docs/tuning.md, "Shape dispatch"), which libtilec's
    tilec_select_config applies; the answer is kept per shape.

    Attributes: records (the paths, as given), kernels (one Kernel per
    record, in that order), name, params; pick(**scalars) is the index
    of the record a call with those scalars takes."""

    def __init__(self, records, kernels):
        self.records, self.kernels = list(records), list(kernels)
        k = self.kernels[0]
        self.name, self.params, self.target = k.name, k.params, k.target
        params = k.manifest["params"]
        self._scalars = [p["name"] for p in params if p["kind"] == "scalar"
                         and p["dtype"] in _INT_DTYPES]
        self._extent = {p["name"]: p.get("extent_of", [])
                        for p in params if p["kind"] == "scalar"}
        # What positional arguments fill: every parameter, or those that
        # cannot be inferred (the runtime's rule).
        self._all = [p["name"] for p in params]
        self._given = [p["name"] for p in params if not (
            p["kind"] == "scalar" and p.get("extent_of"))]
        self._picks = {}
        self._tr = _Translator(k.target, None, None, None, None)
        self._paths = (ctypes.c_char_p * len(self.records))(
            *[os.fspath(r).encode() for r in self.records])

    def __repr__(self):
        return "<tilec.Dispatch %s over %d records>" % (self.name,
                                                        len(self.records))

    def pick(self, **scalars):
        """The index in records of the record a call with these integer
        scalars takes (ValueError when a bucket names one not given)."""
        key = tuple(scalars.get(n) for n in self._scalars)
        at = self._picks.get(key)
        if at is not None:
            return at
        names = [n for n in self._scalars if scalars.get(n) is not None]
        for n in names:
            _check_int64(n, int(scalars[n]))
        cn = (ctypes.c_char_p * max(len(names), 1))(
            *[n.encode() for n in names])
        cv = (ctypes.c_longlong * max(len(names), 1))(
            *[int(scalars[n]) for n in names])
        at = self._tr.lib.tilec_select_config(
            self._tr.tr, self._paths, len(self.records), cn, cv, len(names))
        if at < 0:
            raise ValueError(self._tr.diagnostics().strip() or
                             "tilec: no record picked")
        self._picks[key] = at
        return at

    def _shape(self, args, kwargs):
        """The integer scalars of a call, given or from tensor shapes."""
        order = self._all if len(args) == len(self._all) else self._given
        bound = dict(zip(order, args))
        bound.update(kwargs)
        out = {}
        for n in self._scalars:
            if n in bound and isinstance(bound[n], int):
                out[n] = bound[n]
                continue
            for e in self._extent.get(n, ()):
                shape = getattr(bound.get(e["tensor"]), "shape", None)
                if shape is not None and e["dim"] < len(shape):
                    out[n] = int(shape[e["dim"]])
                    break
        return out

    def __call__(self, *args, **kwargs):
        at = self.pick(**self._shape(args, kwargs))
        return self.kernels[at](*args, **kwargs)


def _check_int64(what, value):
    """ValueError for an integer outside 64 bits: ctypes' c_longlong
    would wrap it silently into another value."""
    if not _arrays.INT64[0] <= value <= _arrays.INT64[1]:
        raise ValueError("%s: %d does not fit in 64 bits" % (what, value))


_INT_DTYPES = ("i8", "u8", "i16", "i32", "i64", "bool")


def compile(path_or_text, target="openmp", arch=None, defines=None,
            config=None, kernel=None, device=0):
    """Translate a tile program (a file name or its text) for `target`
    ("openmp", "cuda", "hip"), compile it through the runtime's disk
    cache and return its kernel (`kernel`, or the program's only one) as
    a callable Kernel.  `arch` defaults to the machine's (the host's
    vector ISA; the GPU's); `defines` binds tunables ({"BLOCK_M": 64}),
    `config` is a tuning record to replay, or a list of records tuned at
    different shapes: then a Dispatch, which picks one per call by the
    call's shape.  TranslationError for errors
    in the program; tilec.RuntimeError when compiling or loading fails;
    TranslatorUnavailable where libtilec cannot be loaded (tilec.load
    then runs code translated elsewhere)."""
    if isinstance(config, (list, tuple)):
        if not config:
            raise ValueError("config: an empty list of tuning records")
        kernels = [compile(path_or_text, target, arch, defines, c, kernel,
                           device) for c in config]
        if len(kernels) == 1:
            return kernels[0]
        d = Dispatch(config, kernels)
        # The records' buckets checked now (two of one bucket, a scalar
        # the kernel lacks), not at the first call.
        d.pick(**{n: 1 for n in d._scalars})
        return d
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


def _generated(source):
    """(file name or None, text) of generated source given as its text
    (a str with a newline) or a file (any other str, or a PathLike)."""
    if isinstance(source, (bytes, bytearray)):
        return None, bytes(source).decode("utf-8")
    if isinstance(source, os.PathLike) or (isinstance(source, str) and
                                           "\n" not in source):
        path = os.fspath(source)
        try:
            with open(path, encoding="utf-8") as f:
                return path, f.read()
        except FileNotFoundError:
            raise FileNotFoundError("source: no generated source at %r"
                                    % path) from None
    if not isinstance(source, str):
        raise TypeError("source: the generated code's text or file name, "
                        "not %s" % type(source).__name__)
    return None, source


def _launch_document(manifest):
    """The launch document (a dict with "format" and "kernels") from a
    dict, JSON text or a file; one kernel's object alone (a tuning farm's
    `launch`) is taken as a document of that kernel.  ValueError when it
    is none of these."""
    where = "manifest"
    if isinstance(manifest, dict):
        doc = manifest
    else:
        if isinstance(manifest, os.PathLike) or (
                isinstance(manifest, str) and
                not manifest.lstrip().startswith("{")):
            where = os.fspath(manifest)
            try:
                with open(where, encoding="utf-8") as f:
                    manifest = f.read()
            except FileNotFoundError:
                raise FileNotFoundError("manifest: no launch document at %r"
                                        % where) from None
        elif not isinstance(manifest, (str, bytes, bytearray)):
            raise TypeError("manifest: the launch document (a dict, its "
                            "JSON text or its file), not %s"
                            % type(manifest).__name__)
        try:
            doc = json.loads(manifest)
        except ValueError as e:
            raise ValueError("%s: not JSON: %s" % (where, e)) from None
    if isinstance(doc, dict) and "format" not in doc and "kernel" in doc \
            and "params" in doc:
        doc = {"format": LAUNCH_FORMAT, "kernels": [doc]}
    if not isinstance(doc, dict) or doc.get("format") != LAUNCH_FORMAT or \
            not isinstance(doc.get("kernels"), list) or \
            not all(isinstance(k, dict) for k in doc["kernels"]):
        raise ValueError("%s: not a launch document (format %r with a "
                         "kernels array: tilec --emit=launch, or an export's "
                         "K.launch.json; docs/launch.md)" % (where,
                                                            LAUNCH_FORMAT))
    return where, doc


HEADER_EXTENSIONS = (".h", ".hh", ".hpp", ".cuh", ".inc")
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def _beside(path, text):
    """The files a source at `path` includes with quotes, found in its
    directory (as `cc -I DIR` finds them), and those they include:
    [(include name, bytes)].  Names that would leave the directory are
    left to the compiler, which will not find them either."""
    top = os.path.dirname(os.path.abspath(path))
    found, todo = {}, _QUOTED_INCLUDE.findall(text)
    while todo:
        name = todo.pop()
        parts = name.split("/")
        if name in found or name.startswith("/") or ".." in parts:
            continue
        full = os.path.join(top, *parts)
        if not os.path.isfile(full):
            continue
        with open(full, "rb") as f:
            found[name] = f.read()
        todo += _QUOTED_INCLUDE.findall(found[name].decode("utf-8",
                                                           "replace"))
    return sorted(found.items())


def _headers(headers, path, text):
    """[(include name, bytes)] from a mapping of include names to text, a
    directory (every header file below it, named by its path relative to
    the directory), or None: the headers a source file includes from its
    own directory (_beside); none for source given as text."""
    if headers is None:
        return _beside(path, text) if path else []
    if isinstance(headers, (str, os.PathLike)):
        top = os.fspath(headers)
        if not os.path.isdir(top):
            raise FileNotFoundError("headers: no directory %r" % top)
        items = []
        for d, dirs, files in os.walk(top):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith(HEADER_EXTENSIONS):
                    continue
                full = os.path.join(d, f)
                with open(full, "rb") as h:
                    items.append((os.path.relpath(full, top).replace(
                        os.sep, "/"), h.read()))
        return sorted(items)
    if not hasattr(headers, "items"):
        raise TypeError("headers: a mapping of include names to text, or a "
                        "directory, not %s" % type(headers).__name__)
    out = []
    for name, value in headers.items():
        if not isinstance(name, str):
            raise TypeError("headers: include names are str, not %r" % (name,))
        if isinstance(value, str):
            value = value.encode("utf-8")
        elif not isinstance(value, (bytes, bytearray)):
            raise TypeError("headers[%r]: the header's text, not %s" % (
                name, type(value).__name__))
        out.append((name, bytes(value)))
    return sorted(out)


def load(source, manifest, target=None, kernel=None, arch=None, device=0,
         headers=None):
    """The kernel of generated code translated elsewhere, without the
    translator: `source` is the target code (its text, or a file: the
    output of `tilec FILE -t TARGET --standalone`, or
    tilec.translate(..., standalone=True)) and `manifest` its launch
    document (a dict, its JSON text or a file: `tilec --emit=launch`, an
    export's K.launch.json, tilec.translate(..., emit="launch");
    docs/launch.md), which gives the kernel its signature, so calls are
    checked exactly as a compiled Kernel's.

    `target` and `kernel` default to the document's (it must then hold
    one kernel); `arch` is the compiler's (the GPU's own, or the host's
    -march=native, when None); `device` the GPU.  Headers the source
    includes with quotes are found beside a source file (as cc finds
    them: an export's K.h, `--no-standalone`'s DIR/tilec/...); `headers`
    names them instead: a directory (every .h, .hh, .hpp, .cuh and .inc
    below it, named by its path relative to it) or a mapping of include
    names to text.  Compiled through the runtime's disk cache, as
    tilec.compile; only libtilec_runtime is used.  ValueError for a
    document that is none or does not describe the kernel; tilec.
    RuntimeError when compiling or loading fails."""
    name, text = _generated(source)
    where, doc = _launch_document(manifest)
    names = [k.get("kernel") for k in doc["kernels"]]
    if kernel is None:
        if len(names) != 1:
            raise ValueError("kernel: %s describes %d kernels (%s); say "
                             "which" % (where, len(names),
                                        ", ".join(map(str, names))))
        kernel = names[0]
    if not isinstance(kernel, str) or kernel not in names:
        raise ValueError("kernel: %s describes no kernel %r (it has %s)" % (
            where, kernel, ", ".join(map(str, names)) or "none"))
    kobj = doc["kernels"][names.index(kernel)]
    translated_for = kobj.get("target")
    if target is None:
        target = translated_for
    if target not in TARGETS:
        raise ValueError("target: one of %s, not %r" % (", ".join(TARGETS),
                                                        target))
    if translated_for != target:
        raise ValueError("%s: %s was translated for %s, not %s" % (
            where, kernel, translated_for, target))
    if arch is not None and not isinstance(arch, str):
        raise TypeError("arch: a str, not %s" % type(arch).__name__)
    found = _headers(headers, name, text)

    rt = _lib.runtime()
    if target == "cuda" and arch is not None:
        _check_arch(kobj, arch, "arch=%r" % arch)
    ctx = _Context.get(target, device)
    if target == "cuda" and arch is None:
        info = _lib.DeviceInfo()
        if rt.tilec_device_get_info(ctx, ctypes.byref(info)):
            raise RuntimeError(_text(rt.tilec_error(ctx)))
        _check_arch(kobj, _text(info.arch),
                    "GPU %d (%s)" % (device, _text(info.name)))
    stem = os.path.splitext(os.path.basename(name))[0] if name else kernel
    opts = _lib.CompileOptions()
    rt.tilec_compile_options_init(ctypes.byref(opts))
    opts.name = ("%s.%s%s" % (stem, target, EXTENSIONS[target])).encode()
    opts.arch = arch.encode() if arch else None
    hs = (_lib.Header * max(len(found), 1))()
    for i, (hname, htext) in enumerate(found):
        hs[i].name, hs[i].text, hs[i].len = hname.encode(), htext, len(htext)
    opts.headers = hs if found else None
    opts.nheaders = len(found)
    wanted = (ctypes.c_char_p * 1)(kernel.encode())
    opts.kernels, opts.nkernels = wanted, 1
    # Only this kernel's signature: the module is loaded for it alone.
    opts.manifest = json.dumps({"format": LAUNCH_FORMAT,
                                "kernels": [kobj]}).encode()
    data = text.encode("utf-8")
    mod = rt.tilec_compile(ctx, data, len(data), ctypes.byref(opts))
    if not mod:
        raise RuntimeError("tilec.load %s: %s%s" % (
            name or kernel, _text(rt.tilec_error(ctx)),
            _arrays.nvrtc_note() if target == "cuda" else ""))
    k = rt.tilec_module_kernel(mod, kernel.encode())
    if not k:
        msg = _text(rt.tilec_error(ctx))
        rt.tilec_module_free(mod)
        raise RuntimeError("tilec.load %s: %s" % (name or kernel, msg))
    return Kernel(ctx, mod, k, kernel, target, device, text, kobj)


def _check_arch(kobj, arch, what):
    """CUDA code translated for an arch-specific target ("sm_90a": its
    instructions exist on that GPU alone) compiles for that arch only;
    refused up front elsewhere, rather than as a compiler error."""
    translated = kobj.get("arch")
    if isinstance(translated, str) and translated.startswith("sm_") and \
            translated.endswith("a") and arch != translated:
        raise ValueError("%s was translated for %s, whose instructions "
                         "only %s GPUs have; %s is %s: translate it for "
                         "that" % (kobj.get("kernel"), translated,
                                   translated, what, arch))


from ._bench import BenchResult, bench  # noqa: E402  (uses Kernel)
from ._torch import torch_op  # noqa: E402
