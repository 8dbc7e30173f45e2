#!/usr/bin/env python3
"""Checks the two dependency rules of docs/design.md ("Layers"):

1. csrc/: a layer includes only its own headers, lower layers' and the public headers
   (csrc/include/pyshmem/), which include no layer. LAYERS below is the order, lowest
   first; an include of a higher layer is a violation.
2. pyshmem/: no import cycles. Every import statement counts, at module level or inside
   a function (a lazy import that breaks a cycle at run time still ties the two modules
   together): the strongly connected components of the import graph must be single
   modules. An edge goes to the module named (``from a import b``: to a.b when that is
   a module, else to a), not to the parent packages Python also runs; imports made with
   importlib are not seen.

    python scripts/check_layers.py          # prints violations; exit 1 when there are any
    python scripts/check_layers.py --json   # the same as JSON (tests/unit/test_layers.py)
    python scripts/check_layers.py --includes-only   # rule 1 only (every CMake build runs it)

Only the standard library is used.
"""

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# csrc/ layers, lowest first (docs/design.md, "Layers").
LAYERS = ("core", "bootstrap", "heap", "transport", "order", "cuda", "proxy", "team", "coll", "host", "python")
# Compiled extension modules (no .py source): leaves of the import graph.
EXTENSIONS = ("pyshmem._C",)
# Directories of csrc/ that are no layer: the public headers (checked as below every
# layer) and the NVSHMEM header generator (Python). Any other directory must be a layer.
NOT_LAYERS = ("include", "nvshmem")
# Both include forms: csrc/ is on the include path for either.
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](([^">/]+)/[^">]+)[">]', re.M)


def upward_includes(root=ROOT):
    """[(file, line, included layer)] for every include of a higher layer in csrc/."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    rank["include"] = -1  # the public headers: below every layer
    unknown = sorted(p.name for p in (root / "csrc").iterdir() if p.is_dir() and p.name not in rank
                     and p.name not in NOT_LAYERS)
    if unknown:
        raise SystemExit(f"check_layers: csrc/{unknown[0]}/ is no known layer; add it to LAYERS (or NOT_LAYERS) "
                         "in scripts/check_layers.py and to docs/design.md's diagram")
    found = []
    for layer in ("include",) + LAYERS:
        for path in sorted((root / "csrc" / layer).rglob("*")):
            if path.suffix not in (".h", ".cpp", ".cuh", ".def", ".inc"):
                continue
            text = path.read_text()
            for m in _INCLUDE.finditer(text):
                target = m.group(2)
                # "cuda/std/atomic" is libcu++'s, not the cuda layer's: only files that exist
                # under csrc/ count.
                if target in rank and rank[target] > rank[layer] and (root / "csrc" / m.group(1)).is_file():
                    line = text.count("\n", 0, m.start()) + 1
                    found.append((str(path.relative_to(root)), line, target))
    return found


def _module_name(path, pkg_root):
    rel = path.relative_to(pkg_root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root=ROOT, package="pyshmem"):
    """{module: {imported module}} over the package's own modules."""
    pkg = root / package
    modules = {_module_name(p, pkg): p for p in pkg.rglob("*.py")}
    graph = {ext: set() for ext in EXTENSIONS}
    modules.update(dict.fromkeys(EXTENSIONS))
    for name, path in modules.items():
        if path is None:
            continue
        is_pkg = path.name == "__init__.py"
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from the module's package
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[:len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                # `from a import b` imports the module a.b when there is one, else a's name b.
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in modules:  # `import a.b.c` of a name inside a.b
                    t = t.rpartition(".")[0]
                if t and t != name:
                    edges.add(t)
        graph[name] = edges
    return graph


def import_cycles(graph):
    """The strongly connected components with more than one module, each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):  # Tarjan, iterative over the successors to stay within the recursion limit
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, succ = work[-1]
            for w in succ:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main(argv):
    includes = upward_includes()
    cycles = [] if "--includes-only" in argv else import_cycles(import_graph())
    if "--json" in argv:
        print(json.dumps({"upward_includes": includes, "import_cycles": cycles}))
    else:
        for path, line, target in includes:
            print(f"{path}:{line}: includes {target}/, a higher layer (order: {' < '.join(LAYERS)})")
        for comp in cycles:
            print(f"import cycle: {' <-> '.join(comp)}")
        if "--includes-only" in argv:
            print(f"{len(includes)} upward include(s)")
        else:
            print(f"{len(includes)} upward include(s), {len(cycles)} import cycle(s)")
    return 1 if includes or cycles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
