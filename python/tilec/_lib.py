"""The shared libraries libtilec (the translator) and libtilec_runtime,
loaded with ctypes, their functions declared once here.  Each is loaded
when first needed: the runtime for any kernel, the translator only for
translate and compile, so that tilec.load works where libtilec (which
links libclang) is absent.

Where they are looked for, in order: the directory in TILEC_LIBRARY_DIR;
what the dynamic loader finds (ldconfig, LD_LIBRARY_PATH); the usual
install prefixes.  NotFound says every place tried.
"""
import ctypes
import ctypes.util
import os
import threading

c_int, c_char_p, c_void_p, c_size_t = (ctypes.c_int, ctypes.c_char_p,
                                       ctypes.c_void_p, ctypes.c_size_t)

PREFIXES = ["/usr/local/lib/x86_64-linux-gnu", "/usr/local/lib64",
            "/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
            "/usr/lib"]


class NotFound(OSError):
    """A library that is nowhere it was looked for."""


class InitError(ctypes.Structure):
    _fields_ = [("status", c_int), ("message", ctypes.c_char * 512)]


class Arg(ctypes.Structure):
    """tilec_arg (tilec_runtime.h); `size` says which version it is."""
    _fields_ = [("size", c_size_t), ("name", c_char_p), ("kind", c_int),
                ("data", c_void_p), ("dtype", c_int), ("rank", c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("ivalue", ctypes.c_longlong), ("fvalue", ctypes.c_double),
                ("memory", c_int), ("device", c_int),
                ("read_only", c_int)]


class DeviceInfo(ctypes.Structure):
    """tilec_device_info."""
    _fields_ = [("name", ctypes.c_char * 256), ("arch", ctypes.c_char * 32),
                ("compile_only", c_int), ("cc_major", c_int),
                ("cc_minor", c_int), ("multiprocessors", c_int),
                ("max_shared_bytes", c_size_t), ("total_memory", c_size_t)]


class Header(ctypes.Structure):
    """tilec_header."""
    _fields_ = [("name", c_char_p), ("text", c_char_p), ("len", c_size_t)]


class CompileOptions(ctypes.Structure):
    """tilec_compile_options; tilec_compile_options_init sets `size`."""
    _fields_ = [("size", c_size_t), ("name", c_char_p), ("arch", c_char_p),
                ("flags", c_char_p), ("headers", ctypes.POINTER(Header)),
                ("nheaders", c_int), ("no_cache", c_int),
                ("kernels", ctypes.POINTER(c_char_p)), ("nkernels", c_int),
                ("manifest", c_char_p)]


ARG_TENSOR, ARG_INT, ARG_FLOAT = 1, 2, 3
MEMORY_HOST, MEMORY_DEVICE = 1, 2
PROBLEM_TYPE, PROBLEM_VALUE = 1, 2
OK, ERR_INVALID, ERR_COMPILE = 0, 1, 3
STANDALONE = 1  # TILEC_STANDALONE (tilec_translator.h)


def _candidates(stem):
    soname = "lib%s.so" % stem
    where = []
    d = os.environ.get("TILEC_LIBRARY_DIR")
    if d:
        where.append(os.path.join(d, soname))
    found = ctypes.util.find_library(stem)
    if found:
        where.append(found)
    else:
        where.append(soname)  # the loader's own search (LD_LIBRARY_PATH)
    where += [os.path.join(p, soname) for p in PREFIXES]
    return where


def _load(stem):
    tried = []
    for path in _candidates(stem):
        try:
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise NotFound("cannot load lib%s.so; tried:\n  %s\nInstall tilec "
                   "(meson install) or set TILEC_LIBRARY_DIR to the "
                   "directory holding it" % (stem, "\n  ".join(tried)))


def _declare(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


class TranslatorUnavailable(NotFound):
    """libtilec, the translator, cannot be loaded here (it links
    libclang): translate, compile and the runtime-only tilec.load's
    documents must come from a machine that has it."""


_lock = threading.Lock()
_runtime = None
launch_checked = None  # _declare_runtime sets it
_translator = None


def runtime():
    """libtilec_runtime, loaded and declared on first use.  It needs
    nothing but the C library: every machine that runs kernels has it."""
    global _runtime
    if _runtime is None:
        with _lock:
            if _runtime is None:
                rt = _load("tilec_runtime")
                _declare_runtime(rt)
                _runtime = rt
    return _runtime


def translator():
    """libtilec, the translator, loaded on first use (after the runtime,
    which it links).  TranslatorUnavailable when it cannot be, with
    every place tried and what to do instead."""
    global _translator
    if _translator is None:
        runtime()
        with _lock:
            if _translator is None:
                try:
                    tr = _load("tilec")
                except NotFound as e:
                    raise TranslatorUnavailable(
                        "tilec: the translator (libtilec, which links "
                        "libclang) cannot be loaded here, so tile programs "
                        "cannot be translated or compiled from source on "
                        "this machine.  Translate them where tilec is "
                        "installed (tilec FILE -t TARGET --standalone -o "
                        "K.cu and --emit=launch -o K.launch.json, or "
                        "tilec.translate(..., standalone=True) and "
                        "emit=\"launch\") and call tilec.load(source, "
                        "manifest) here; libtilec_runtime alone runs "
                        "them.\n%s" % e) from None
                _declare_translator(tr)
                _translator = tr
    return _translator


def translator_available():
    """True when libtilec loads here (it is loaded by asking)."""
    try:
        translator()
    except TranslatorUnavailable:
        return False
    return True


def _declare_runtime(rt):
    P = c_void_p
    _declare(rt, "tilec_context_new", P, c_int, c_int,
             ctypes.POINTER(InitError))
    _declare(rt, "tilec_context_free", None, P)
    _declare(rt, "tilec_error", c_char_p, P)
    _declare(rt, "tilec_set_cache_dir", c_int, P, c_char_p)
    _declare(rt, "tilec_device_get_info", c_int, P,
             ctypes.POINTER(DeviceInfo))
    _declare(rt, "tilec_compile_options_init", None,
             ctypes.POINTER(CompileOptions))
    _declare(rt, "tilec_compile", P, P, c_char_p, c_size_t,
             ctypes.POINTER(CompileOptions))
    _declare(rt, "tilec_module_kernel", P, P, c_char_p)
    _declare(rt, "tilec_module_free", None, P)
    _declare(rt, "tilec_backend_from_name", c_int, c_char_p)
    _declare(rt, "tilec_synchronize", c_int, P)
    _declare(rt, "tilec_launch_checked", c_int, P, ctypes.POINTER(Arg),
             c_int, P)
    _declare(rt, "tilec_launch_problem", c_int, P)
    # The same function for Kernel's calls, its arguments as addresses
    # (ints convert to c_void_p faster than ctypes objects check).
    global launch_checked
    launch_checked = rt["tilec_launch_checked"]
    launch_checked.restype = c_int
    launch_checked.argtypes = [P, P, c_int, P]
    _declare(rt, "tilec_dtype_from_name", c_int, c_char_p)


def _declare_translator(tr):
    P = c_void_p
    _declare(tr, "tilec_translator_new", P)
    _declare(tr, "tilec_translator_free", None, P)
    _declare(tr, "tilec_translator_set_target", c_int, P, c_char_p,
             c_char_p)
    _declare(tr, "tilec_translator_set_kernel", c_int, P, c_char_p)
    _declare(tr, "tilec_translator_define", c_int, P, c_char_p,
             ctypes.c_longlong)
    _declare(tr, "tilec_translator_set_config", c_int, P, c_char_p)
    _declare(tr, "tilec_select_config", c_int, P,
             ctypes.POINTER(c_char_p), c_int, ctypes.POINTER(c_char_p),
             ctypes.POINTER(ctypes.c_longlong), c_int)
    _declare(tr, "tilec_translator_set_flags", c_int, P, ctypes.c_uint)
    _declare(tr, "tilec_translate_file", c_int, P, c_char_p)
    _declare(tr, "tilec_translate_string", c_int, P, c_char_p, c_char_p,
             c_size_t)
    _declare(tr, "tilec_translator_output", c_char_p, P,
             ctypes.POINTER(c_size_t))
    _declare(tr, "tilec_translator_manifest", c_char_p, P)
    _declare(tr, "tilec_translator_diagnostics", c_char_p, P)
    _declare(tr, "tilec_jit", P, P, P, c_char_p, c_char_p, c_size_t,
             c_char_p, P, ctypes.POINTER(P))
