"""Source rewrites that let a CUDA program's host code compile for the CPU.

Used by ``pyshmem-nvcc --cpu`` (pyshmem/nvcc.py) on the *preprocessed* program (so
kernels and launches written inside macros or in included headers are seen as the
compiler sees them), before the host C++ compiler compiles it: the triple-chevron
launch syntax is not C++, and ``cudaLaunchKernel``, ``cuModuleGetFunction`` and
``nvshmemx_collective_launch`` take kernels by address or by name, so the CPU build
needs to know which functions are kernels. Newlines are kept, so compiler messages keep
their line numbers.

- ``callee<<<cfg>>>(args)`` becomes a call of ``pyshmem::cpu::launch``
  (pyshmem/cpu_launch.h) with the callee wrapped in a generic lambda, so template
  kernels, overloads and default arguments resolve as in the original call.
- The body of every ``__global__`` function definition, templates included, starts with
  a use of ``pyshmem::cpu::kernel_registered<kernel>``, whose initialisation registers
  the kernel (every instantiation of a template kernel) for launches by address and by
  name before ``main`` runs.
- ``extern __shared__ T name[];`` becomes a reference to the launch's dynamic shared
  memory (pyshmem/_cpu_kernels.py's rewrite_dynamic_shared).
"""

import re

from pyshmem._kernel_args import _split_params
from pyshmem.errors import InvalidArgumentError

_IDENT = re.compile(r"[A-Za-z_]\w*")
# What is not code: comments, string and character literals (raw strings too), and
# preprocessor directive lines (with their continuations). A quote after a digit is a
# C++14 digit separator, not a character literal.
_NOT_CODE = re.compile(
    r"""//[^\n]*"""
    r"""|/\*.*?(?:\*/|\Z)"""
    r"""|(?:\bu8|\bu|\bU|\bL)?R"([^ ()\\\t\n]{0,16})\(.*?\)\1"(?#raw string)"""
    r"""|"(?:\\.|[^"\\\n])*"?"""
    r"""|(?<![0-9A-Fa-f_])'(?:\\.|[^'\\\n])*'?"""
    r"""|(?:^|(?<=\n))[ \t]*\#(?:\\\n|[^\n])*""",
    re.S)


def code_mask(src):
    """A bytearray with 1 where src[i] is code and 0 in comments, string and character
    literals and preprocessor directive lines."""
    mask = bytearray(b"\x01") * len(src)
    for m in _NOT_CODE.finditer(src):
        a, b = m.span()
        mask[a:b] = bytes(b - a)
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


def _template_arguments(head):
    """The argument list naming a template's own parameters, from the code before its
    `__global__` ("template <class T, int N, class... R>" -> "T, N, R..."): "" when the
    head is no template, None when a parameter has no name (the kernel is then named
    without arguments, left to deduction from its parameter types)."""
    m = re.search(r"\btemplate\s*<", head)
    if not m:
        return ""
    depth, j = 0, m.end() - 1
    for j in range(m.end() - 1, len(head)):
        if head[j] in "<(":
            depth += 1
        elif head[j] in ">)":
            depth -= 1
            if depth == 0:
                break
    args = []
    for param in _split_params(head[m.end():j]):
        decl = _strip_default(param).strip()
        names = _IDENT.findall(decl)
        if not names or names[-1] in ("class", "typename") or re.search(r"\.\.\.\s*$", decl):
            return None
        args.append(names[-1] + ("..." if "..." in decl else ""))
    return ", ".join(args)


def find_kernels(source, mask=None):
    """The ``__global__`` function definitions of `source`: a list of dicts with name,
    params (parameter texts without default arguments), defaults (has default
    arguments), template (None for a plain function, else the argument list naming its
    template parameters, or "?" when they cannot be named), body (index of its '{'),
    end (index just past its '}') and line."""
    mask = code_mask(source) if mask is None else mask
    found = []
    for m in re.finditer(r"\b__global__\b", source):
        if not mask[m.start()]:
            continue
        back = _back_to_statement(source, mask, m.start())
        head_text = "".join(c for c, code in zip(source[back + 1:m.start()], mask[back + 1:m.start()]) if code)
        template = _template_arguments(head_text)
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
        found.append({"name": name, "params": [" ".join(_strip_default(p).split()) for p in raw],
                      "defaults": any(_strip_default(p) != p for p in raw),
                      "template": None if template == "" else ("?" if template is None else template),
                      "body": k, "end": body_end, "line": source.count("\n", 0, m.start()) + 1})
    return found


def single_kernels(source):
    """{name: number of parameters} of the kernels `source` defines once, not templates,
    without default arguments: their launches convert the arguments to the parameter
    types at the launch (so 0 and NULL pass for pointers, as in a call)."""
    kernels = find_kernels(source)
    names = [k["name"] for k in kernels]
    return {k["name"]: len(k["params"]) for k in kernels
            if names.count(k["name"]) == 1 and not k["defaults"] and k["template"] is None}


def registration(kernel):
    """The statement that starts a kernel's body and registers it (each instantiation of
    a template kernel) for launches by address and by name (pyshmem/cpu_launch.h)."""
    name = kernel["name"]
    if kernel["template"] not in (None, "?"):
        name = f"{name}<{kernel['template']}>"
    fn = f"static_cast<void (*)({', '.join(kernel['params'])})>({name})"
    return f" (void)::pyshmem::cpu::kernel_registered<{fn}>;"


def register_kernels(source):
    """Starts the body of every ``__global__`` function definition with its registration
    (see registration()); the text keeps its lines."""
    for kernel in reversed(find_kernels(source)):
        at = kernel["body"] + 1
        source = source[:at] + registration(kernel) + source[at:]
    return source


# A line marker of the preprocessor's output: # LINE "FILE" FLAGS (1 enter, 2 return,
# 3 system header, 4 extern "C").
_LINE_MARKER = re.compile(r'^# (\d+) ("(?:[^"\\]|\\.)*")((?: [1-4])*)[ \t]*$', re.M)


def after_prelude(text, sentinel):
    """The part of a preprocessed translation unit after the line holding `sentinel` (the
    last declaration of the prelude header that the compile step gets precompiled), with
    the line markers' enter/return flags dropped (the compile step starts in the middle
    of the include stack; the system-header and extern "C" flags stay).

    Raises:
        InvalidArgumentError: the sentinel is missing.
    """
    at = text.find(sentinel)
    if at < 0:
        raise InvalidArgumentError(f"pyshmem-nvcc: the preprocessed source lacks the prelude's end ({sentinel})")
    text = text[text.find("\n", at) + 1:]
    return _LINE_MARKER.sub(lambda m: f"# {m.group(1)} {m.group(2)}" + "".join(
        f" {f}" for f in m.group(3).split() if f in "34"), text)


def _hide_system_code(text):
    """Replaces the text of every system-header region (line markers with flag 3) by a
    comment naming its index, so the rewrites never look inside; returns the text and
    the regions' texts (restore with _show_system_code)."""
    regions, out, pos, system = [], [], 0, False

    def region(body):
        if not (system and body.strip()):
            out.append(body)
            return
        lead = "\n" if body.startswith("\n") else ""
        tail = "\n" if len(body) > len(lead) and body.endswith("\n") else ""
        out.append(f"{lead}/*pyshmem-system-{len(regions)}*/{tail}")
        regions.append(body[len(lead):len(body) - len(tail)])

    for m in _LINE_MARKER.finditer(text):
        region(text[pos:m.start()])
        out.append(m.group(0))
        pos = m.end()
        system = " 3" in m.group(3)
    region(text[pos:])
    return "".join(out), regions


def _show_system_code(text, regions):
    def restore(m):
        return regions[int(m.group(1))]
    return re.sub(r"/\*pyshmem-system-(\d+)\*/", restore, text)


def rewrite_program(text, filename="<source>"):
    """The rewrites pyshmem-nvcc --cpu applies to a preprocessed translation unit (see the
    module docstring), outside system headers."""
    from pyshmem._cpu_kernels import rewrite_dynamic_shared

    text, regions = _hide_system_code(text)
    text = register_kernels(rewrite_dynamic_shared(text))
    text = rewrite_chevrons(text, filename, single_kernels(text))
    return _show_system_code(text, regions)


__all__ = ["after_prelude", "code_mask", "find_kernels", "register_kernels", "registration", "rewrite_chevrons",
           "rewrite_program", "single_kernels"]
