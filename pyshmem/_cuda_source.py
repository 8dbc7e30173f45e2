"""Source rewrites that let a CUDA program's host code compile for the CPU.

Used by ``pyshmem-nvcc --cpu`` (pyshmem/nvcc.py) before the host C++ compiler sees a
``.cu`` file: the triple-chevron launch syntax is not C++, and ``cudaLaunchKernel``
takes kernels by address, so the CPU build needs to know which functions are kernels.
Newlines are kept, so compiler messages keep their line numbers.

- ``callee<<<cfg>>>(args)`` becomes a call of ``pyshmem::cpu::launch``
  (pyshmem/cpu_launch.h) with the callee wrapped in a generic lambda, so template
  kernels, overloads and default arguments resolve as in the original call.
- After each non-template ``__global__`` function definition, a static initialiser
  registers it (``pyshmem::cpu::register_kernel``) for launches by address.
"""

import re

from pyshmem._kernel_args import _split_params
from pyshmem.errors import InvalidArgumentError

_IDENT = re.compile(r"[A-Za-z_]\w*")


def code_mask(src):
    """A list of booleans: True where src[i] is code (not a comment, string or character
    literal, or a preprocessor directive line)."""
    mask = [True] * len(src)
    i, n = 0, len(src)
    line_start = True
    while i < n:
        c = src[i]
        if line_start and c == "#":  # a directive: to the end of the (continued) line
            j = i
            while j < n and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            for k in range(i, min(j, n)):
                mask[k] = False
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if src[k] != "\n":
                mask[k] = False
        i = j
    return mask


def _match_forward(src, mask, i, open_ch, close_ch):
    """Index just past the bracket matching the opening one at i (code only), or -1."""
    depth = 0
    for j in range(i, len(src)):
        if not mask[j]:
            continue
        if src[j] == open_ch:
            depth += 1
        elif src[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def _callee_start(src, mask, end):
    """Start of the callee expression that ends just before `end` (an identifier,
    optionally qualified, optionally with a template argument list)."""
    i = end
    while i > 0 and src[i - 1].isspace():
        i -= 1
    if i > 0 and src[i - 1] == ">":  # template arguments: back to the matching '<'
        depth = 0
        j = i - 1
        while j >= 0:
            if mask[j] and src[j] == ">":
                depth += 1
            elif mask[j] and src[j] == "<":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        i = j
        while i > 0 and src[i - 1].isspace():
            i -= 1
    while True:
        j = i
        while j > 0 and (src[j - 1].isalnum() or src[j - 1] == "_"):
            j -= 1
        if j == i:
            return -1
        i = j
        k = i
        while k > 0 and src[k - 1].isspace():
            k -= 1
        if src[max(k - 2, 0):k] == "::":
            i = k - 2
            while i > 0 and src[i - 1].isspace():
                i -= 1
            if i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"):
                return i  # a leading '::'
            continue
        return i


def rewrite_chevrons(source, filename="<source>"):
    """Rewrites every ``callee<<<cfg>>>(args)`` launch (see the module docstring).

    Raises:
        InvalidArgumentError: a launch whose callee or argument list cannot be found.
    """
    out, pos = [], 0
    mask = code_mask(source)
    i = source.find("<<<")
    while i >= 0:
        if not mask[i] or i < pos:
            i = source.find("<<<", i + 1)
            continue
        line = source.count("\n", 0, i) + 1
        start = _callee_start(source, mask, i)
        close = source.find(">>>", i + 3)
        if start < 0 or close < 0:
            raise InvalidArgumentError(f"{filename}:{line}: a <<<...>>> launch whose kernel name or end cannot be "
                                       "found; write it as name<<<grid, block[, shared[, stream]]>>>(args)")
        paren = close + 3
        while paren < len(source) and source[paren].isspace():
            paren += 1
        end = _match_forward(source, mask, paren, "(", ")") if paren < len(source) and source[paren] == "(" else -1
        if end < 0:
            raise InvalidArgumentError(f"{filename}:{line}: a <<<...>>> launch without its (arguments)")
        callee = source[start:i].strip()
        cfg = source[i + 3:close]
        args = source[paren + 1:end - 1]
        name = " ".join(callee.split()).replace('"', "")
        between = "\n" * source.count("\n", close, paren)
        call = (f"::pyshmem::cpu::launch(::pyshmem::cpu::chevron(\"{name}\", {cfg}), false, "
                f"[=](auto&... pyshmem_arg) {{ {callee}(pyshmem_arg...); }}{between}"
                + (f", {args})" if args.strip() else ")"))
        out.append(source[pos:start])
        out.append(call)
        pos = end
        i = source.find("<<<", end)
    out.append(source[pos:])
    return "".join(out)


def _strip_default(param):
    depth = 0
    for k, ch in enumerate(param):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif ch == "=" and depth == 0:
            return param[:k]
    return param


def register_kernels(source):
    """Appends, after each non-template ``__global__`` function definition, a static
    initialiser that registers it for launches by address (cudaLaunchKernel)."""
    mask = code_mask(source)
    inserts = []
    for m in re.finditer(r"\b__global__\b", source):
        if not mask[m.start()]:
            continue
        # A template kernel: 'template' since the previous declaration's end.
        back = max(source.rfind(";", 0, m.start()), source.rfind("}", 0, m.start()), source.rfind("{", 0, m.start()))
        if re.search(r"\btemplate\b", source[back + 1:m.start()]):
            continue
        j = m.end()
        head = re.compile(r"\s*(?:__launch_bounds__\s*\([^()]*\)|[A-Za-z_]\w*|::|\*|&)")
        name = None
        while True:
            h = head.match(source, j)
            if not h:
                break
            tok = h.group(0).strip()
            if _IDENT.fullmatch(tok):
                name = tok
            j = h.end()
        while j < len(source) and source[j].isspace():
            j += 1
        if not name or j >= len(source) or source[j] != "(":
            continue
        params_end = _match_forward(source, mask, j, "(", ")")
        if params_end < 0:
            continue
        k = params_end
        while k < len(source) and source[k].isspace():
            k += 1
        if k >= len(source) or source[k] != "{":
            continue  # a declaration
        body_end = _match_forward(source, mask, k, "{", "}")
        if body_end < 0:
            continue
        params = ", ".join(_strip_default(p).strip() for p in _split_params(source[j + 1:params_end - 1]))
        params = " ".join(params.split())
        line = source.count("\n", 0, m.start()) + 1
        inserts.append((body_end, f" static const bool pyshmem_kernel_registered_{name}_{line} = "
                                  f"::pyshmem::cpu::register_kernel(static_cast<void (*)({params})>({name}), "
                                  f"\"{name}\");"))
    for at, text in reversed(inserts):
        source = source[:at] + text + source[at:]
    return source


__all__ = ["code_mask", "register_kernels", "rewrite_chevrons"]
