"""What a denylist entry forbids, and what every candidate is forbidden regardless of the task.

A task's `denylist` names families (`torch`, `cudnn`, `pthread`, ...). Each family covers shared
libraries (DT_NEEDED / loaded at run time), headers, C symbols and C++ namespaces. Unknown names use
the generic rule: library `lib<name>*`, header `<name>*`, C symbols `<name>*`, namespace `<name>`.
Known families add the names a generic rule would miss (PyTorch's `at::`, OpenMP's `__kmpc_`).
"""

import re
from dataclasses import dataclass, field


@dataclass
class Family:
    name: str
    libs: list = field(default_factory=list)        # library base names: libNAME.so*
    headers: list = field(default_factory=list)     # first path component or file stem prefixes
    symbols: list = field(default_factory=list)     # C symbol prefixes (or exact names ending in '$')
    namespaces: list = field(default_factory=list)  # C++ namespaces (Itanium-mangled identifiers)
    why: str = ""


# Extra names for families whose members do not share one prefix.
_KNOWN = {
    "torch": dict(libs=["torch", "c10", "shm", "caffe2"], headers=["torch", "ATen", "c10", "caffe2"],
                  namespaces=["torch", "at", "c10", "caffe2"], symbols=["THP", "at_", "torch_"]),
    "c10": dict(libs=["c10"], headers=["c10"], namespaces=["c10"]),
    "pthread": dict(libs=["pthread"], headers=["pthread", "thread", "future"],
                    symbols=["pthread_create$", "pthread_detach$", "thrd_create$", "clone$", "clone3$",
                             "_ZNSt6thread", "_ZNSt7jthread", "__gthread_create$"],
                    why="the task is single-threaded: starting threads is not allowed"),
    "omp": dict(libs=["omp", "iomp5"], headers=["omp"], symbols=["omp_", "__kmpc_"]),
    "gomp": dict(libs=["gomp"], headers=["omp"], symbols=["GOMP_", "omp_"]),
    "mkl": dict(libs=["mkl"], headers=["mkl"], symbols=["mkl_", "MKL_", "cblas_"]),
    "openblas": dict(libs=["openblas"], headers=["openblas", "cblas"], symbols=["openblas_", "cblas_"]),
    "blas": dict(libs=["blas", "cblas"], headers=["cblas", "blas"],
                 symbols=["cblas_", "sgemm_$", "dgemm_$", "sgemv_$", "dgemv_$", "saxpy_$", "sdot_$"]),
    "cudnn": dict(libs=["cudnn"], headers=["cudnn"], symbols=["cudnn"]),
    "cublas": dict(libs=["cublas"], headers=["cublas"], symbols=["cublas"]),
    "cublasLt": dict(libs=["cublasLt"], headers=["cublasLt"], symbols=["cublasLt"]),
    "cutlass": dict(headers=["cutlass"], namespaces=["cutlass"]),
    "cute": dict(headers=["cute"], namespaces=["cute"]),
    "thrust": dict(headers=["thrust"], namespaces=["thrust"]),
    "cub": dict(headers=["cub"], namespaces=["cub"]),
}

# Forbidden for every candidate: ways to reach outside the kernel (the harness process, Python, other
# processes, files, dynamic loading) or to patch code. A kernel needs none of them (hacks 10 and 12).
ALWAYS = [
    Family("python", libs=["python"], headers=["Python", "pybind11"], symbols=["Py", "_Py"],
           namespaces=["pybind11"], why="the Python C API reaches into the harness process"),
    Family("dynamic loading", libs=["dl"], headers=["dlfcn"],
           symbols=["dlopen$", "dlmopen$", "dlsym$", "dlvsym$", "dladdr$", "dladdr1$", "dlinfo$",
                    "__libc_dlopen_mode$", "__libc_dlsym$", "_dl_"],
           why="loading or looking up code at run time bypasses the link checks"),
    Family("code patching", symbols=["mprotect$", "pkey_mprotect$", "ptrace$", "process_vm_readv$",
                                     "process_vm_writev$", "syscall$"],
           why="changing memory protections or raw system calls can patch the harness"),
    Family("process control", headers=["spawn"],
           symbols=["fork$", "vfork$", "execv", "execl", "fexecve$", "system$", "popen$",
                    "posix_spawn", "daemon$", "kill$"],
           why="a kernel must not start or signal processes"),
    Family("file access", headers=["fstream"],
           symbols=["open$", "open64$", "openat$", "openat64$", "fopen$", "fopen64$", "freopen",
                    "creat$", "creat64$", "opendir$", "_ZNSt14basic_ifstream", "_ZNSt14basic_ofstream",
                    "_ZNSt13basic_fstream", "_ZNSt12__basic_file", "_ZNSt13basic_filebuf"],
           why="a kernel needs no files; /proc/<pid>/mem would expose the harness"),
]

# Exports that would interpose the runtime (operator new/delete, the C++ ABI) if the library were
# ever loaded globally; extern "C" exports other than the entry point are refused separately.
FORBIDDEN_CXX_EXPORTS = re.compile(r"^(_Znw|_Zna|_Zdl|_Zda|__cxa_|__gxx_)")
TOOLCHAIN_EXPORTS = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def families(denylist):
    out = []
    for name in denylist:
        extra = _KNOWN.get(name, {})
        out.append(Family(
            name=name,
            libs=[name] + [x for x in extra.get("libs", []) if x != name],
            headers=[name] + [x for x in extra.get("headers", []) if x != name],
            symbols=extra.get("symbols", [name]),
            namespaces=extra.get("namespaces", [name]),
            why=extra.get("why", f"{name} is on the task's denylist")))
    return out


def _prefix_match(name, patterns):
    for p in patterns:
        if p.endswith("$"):
            if name == p[:-1]:
                return p[:-1]
        elif name.startswith(p):
            return p
    return None


def match_library(soname, fams):
    """Family forbidding a shared library (e.g. 'libcudnn.so.9' matches cudnn), or None."""
    base = soname.rsplit("/", 1)[-1]
    base = base[3:] if base.startswith("lib") else base
    base = base.split(".so", 1)[0]
    for fam in fams:
        for lib in fam.libs:
            if base.lower().startswith(lib.lower()):
                return fam
    return None


def match_header(path, fams):
    """Family forbidding an #include path (first component or file stem), or None."""
    first = path.strip().split("/", 1)[0]
    stem = first.rsplit(".", 1)[0] if "/" not in path.strip() else first
    for fam in fams:
        for h in fam.headers:
            if stem == h or stem.startswith(h):
                return fam
    return None


def match_header_path(path, fams):
    """Family forbidding a resolved header path relative to its include directory: any component's
    stem counts (`python3.11/Python.h` is Python's, wherever the distribution put it), or None."""
    parts = [p for p in path.strip().split("/") if p]
    for i, part in enumerate(parts):
        fam = match_header(part if i == len(parts) - 1 else part + "/", fams)
        if fam:
            return fam
    return None


def match_symbol(symbol, fams):
    """(Family, what matched) forbidding an undefined symbol, or None."""
    for fam in fams:
        hit = _prefix_match(symbol, fam.symbols)
        if hit:
            return fam, hit
        if symbol.startswith("_Z"):
            for ns in fam.namespaces:
                # A namespace opens a nested name: N, optional cv/ref qualifiers, then its length-
                # prefixed identifier followed by the next component (`_ZN2at6Tensor...`,
                # `...IN5torch8autograd...`). A function merely named `at` does not match.
                if re.search(r"N[rVKRO]*%d%s\d" % (len(ns), re.escape(ns)), symbol):
                    return fam, f"{ns}::"
    return None
