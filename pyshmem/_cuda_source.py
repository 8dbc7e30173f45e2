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


def rewrite_chevrons(source, filename="<source>", typed=None):
    """Rewrites every ``callee<<<cfg>>>(args)`` launch (see the module docstring).

    typed: {kernel name: parameter count} (single_kernels()): a launch of one of these
    by its plain name with that many arguments converts them to the parameter types at
    the launch, as a call does.

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
        nargs = len(_split_params(args)) if args.strip() else 0
        if typed and typed.get(callee) == nargs:
            call = (f"::pyshmem::cpu::launch_tuple(::pyshmem::cpu::chevron(\"{name}\", {cfg}), false, {callee}, "
                    f"::pyshmem::cpu::params_of({callee}){between}({args}))")
        else:
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


def _back_to_statement(source, mask, at):
    """Index of the last code ';', '{' or '}' before `at` (-1 if none)."""
    for k in range(at - 1, -1, -1):
        if mask[k] and source[k] in ";{}":
            return k
    return -1


def find_kernels(source):
    """The ``__global__`` function definitions of `source` that are not templates: a list
    of (name, parameter texts without default arguments, has default arguments, index
    just past the body, line)."""
    mask = code_mask(source)
    found = []
    for m in re.finditer(r"\b__global__\b", source):
        if not mask[m.start()]:
            continue
        back = _back_to_statement(source, mask, m.start())
        head_text = "".join(c for c, code in zip(source[back + 1:m.start()], mask[back + 1:m.start()]) if code)
        if re.search(r"\btemplate\b", head_text):
            continue
        j, name = m.end(), None
        while True:  # the declarator up to the parameter list
            while j < len(source) and source[j].isspace():
                j += 1
            if source.startswith("__launch_bounds__", j):
                j += len("__launch_bounds__")
                while j < len(source) and source[j].isspace():
                    j += 1
                j = _match_forward(source, mask, j, "(", ")") if j < len(source) and source[j] == "(" else -1
                if j < 0:
                    break
                continue
            t = re.compile(r"[A-Za-z_]\w*|::|\*|&").match(source, j)
            if not t:
                break
            if _IDENT.fullmatch(t.group(0)):
                name = t.group(0)
            j = t.end()
        if j < 0 or not name or j >= len(source) or source[j] != "(":
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
        raw = _split_params(source[j + 1:params_end - 1])
        params = [" ".join(_strip_default(p).split()) for p in raw]
        found.append((name, params, any(_strip_default(p) != p for p in raw), body_end,
                      source.count("\n", 0, m.start()) + 1))
    return found


def single_kernels(source):
    """{name: number of parameters} of the kernels `source` defines once, not templates,
    without default arguments: their launches convert the arguments to the parameter
    types at the launch (so 0 and NULL pass for pointers, as in a call)."""
    kernels = find_kernels(source)
    names = [k[0] for k in kernels]
    return {k[0]: len(k[1]) for k in kernels if names.count(k[0]) == 1 and not k[2]}


def register_kernels(source):
    """Appends, after each non-template ``__global__`` function definition, a static
    initialiser that registers it for launches by address (cudaLaunchKernel)."""
    for name, params, _, body_end, line in reversed(find_kernels(source)):
        text = (f" static const bool pyshmem_kernel_registered_{name}_{line} = "
                f"::pyshmem::cpu::register_kernel(static_cast<void (*)({', '.join(params)})>({name}), \"{name}\");")
        source = source[:body_end] + text + source[body_end:]
    return source


__all__ = ["code_mask", "find_kernels", "register_kernels", "rewrite_chevrons", "single_kernels"]
