"""The source rewrites pyshmem-nvcc --cpu applies (pyshmem/_cuda_source.py): launches,
kernel registration, and what they must leave alone."""

import pytest

from pyshmem._cuda_source import after_prelude, register_kernels, rewrite_chevrons, rewrite_program, single_kernels
from pyshmem.errors import InvalidArgumentError


def test_launch_forms_are_rewritten_and_lines_kept():
    src = ("void host() {\n"
           "  k1<<<dim3(2, 1), 64, 0, stream>>>(ptr, 1.5f);\n"
           "  tk<float, 4><<<1, 32>>>(fp);\n"
           "  ns::k3<<<g,\n      b>>>(p, f(1, 2));\n"
           "  k2 <<< 1, 1 >>> ();\n"
           "}\n")
    out = rewrite_chevrons(src)
    assert out.count("\n") == src.count("\n")
    assert "<<<" not in out and ">>>" not in out
    assert ('::pyshmem::cpu::launch(::pyshmem::cpu::chevron("k1", dim3(2, 1), 64, 0, stream), false, '
            "[=](auto&... pyshmem_arg) { k1(pyshmem_arg...); }, ptr, 1.5f);") in out
    assert "{ tk<float, 4>(pyshmem_arg...); }, fp)" in out
    assert "{ ns::k3(pyshmem_arg...); }, p, f(1, 2))" in out
    assert '::pyshmem::cpu::chevron("k2",  1, 1 ), false, [=](auto&... pyshmem_arg) { k2(pyshmem_arg...); });' in out


def test_comments_strings_and_directives_are_left_alone():
    src = '// k<<<1,2>>>(x)\nconst char* s = "a<<<b>>>(c)";\n/* q<<<1,1>>>() */\n#define L(k) k<<<1,1>>>()\n'
    assert rewrite_chevrons(src) == src


def test_a_launch_without_arguments_list_is_an_error():
    with pytest.raises(InvalidArgumentError, match=r"prog.cu:2: a <<<...>>> launch without its \(arguments\)"):
        rewrite_chevrons("void f() {\n  k<<<1, 1>>>;\n}\n", "prog.cu")


def test_every_kernel_definition_starts_with_its_registration():
    src = ("template <class T> __global__ void tk(T* p, int n = 3) {}\n"
           "template <class T, int N, class... R> __global__ void tv(T* p, R... r) { }\n"
           "__global__ void __launch_bounds__(128) k1(int* a, float b = 2.0f) { if (a) {} }\n"
           'extern "C" __global__ void k2(void) {}\n'
           "__global__ void decl(int);\n"
           "namespace ns { __global__ void k3(int* a,\n int n) { } }\n")
    out = register_kernels(src)
    assert out.count("\n") == src.count("\n")
    reg = "(void)::pyshmem::cpu::kernel_registered<static_cast<void (*)({})>({})>;"
    assert "void tk(T* p, int n = 3) { " + reg.format("T* p, int n", "tk<T>") + "}" in out
    assert reg.format("T* p, R... r", "tv<T, N, R...>") in out
    assert "k1(int* a, float b = 2.0f) { " + reg.format("int* a, float b", "k1") in out
    assert reg.format("", "k2") in out
    assert "n) { " + reg.format("int* a, int n", "k3") + " } }" in out  # inside the namespace
    assert "decl)" not in out


def test_a_comment_saying_template_does_not_make_a_template():
    src = ("// A note: this is not a template kernel; it is plain.\n"
           "#define MAXT(a, b) ((a) > (b) ? (a) : (b))\n"
           "__global__ void __launch_bounds__(MAXT(64, 128)) k(int* a) {}\n"
           "template <class T>  // a template\n"
           "__global__ void t(T* a) {}\n")
    out = register_kernels(src)
    assert "static_cast<void (*)(int* a)>(k)>" in out
    assert "static_cast<void (*)(T* a)>(t<T>)>" in out


def test_a_template_parameter_without_a_name_is_left_to_deduction():
    out = register_kernels("template <class> __global__ void u(int* a) {}\n")
    assert "static_cast<void (*)(int* a)>(u)>" in out


def test_rewrite_of_a_preprocessed_program_keeps_system_headers_and_finds_macro_kernels():
    # What the compiler's preprocessor makes of a kernel written by a macro, a launch
    # written in a header, and a system header that happens to hold the same tokens.
    text = ('# 1 "prog.cu"\n'
            '# 1 "/usr/include/sys.h" 1 3 4\n'
            'inline void sys() { const char* s = "k<<<1,1>>>()"; }\n'
            'template <class T> struct __global__;\n'
            '# 3 "prog.cu" 2\n'
            '__global__ void fill_int(int* o) { o[0] = 1; }\n'
            'extern __shared__ float scratch[];\n'
            '# 1 "helpers.cuh" 1\n'
            'void go(int* o) { fill_int<<<1, 32>>>(o); }\n')
    out = rewrite_program(text, "prog.cu")
    assert 'template <class T> struct __global__;' in out  # the system header is not touched
    assert "static_cast<void (*)(int* o)>(fill_int)>" in out
    assert '::pyshmem::cpu::launch_tuple(::pyshmem::cpu::chevron("fill_int", 1, 32), false, fill_int' in out
    assert "thread_local float (&scratch)[]" in out
    assert out.count("\n") == text.count("\n")


def test_after_prelude_keeps_what_follows_the_prelude_without_include_flags():
    text = ('# 1 "p.cu"\n# 1 "/x/cpu_program.h" 1\nextern "C" int pyshmem_cpu_program_prelude_end;\n'
            '# 1 "p.cu" 2\nint main() {}\n# 1 "/usr/include/a.h" 1 3 4\nint a;\n# 2 "p.cu" 2\n')
    assert after_prelude(text, "pyshmem_cpu_program_prelude_end") == (
        '# 1 "p.cu"\nint main() {}\n# 1 "/usr/include/a.h" 3 4\nint a;\n# 2 "p.cu"\n')
    with pytest.raises(InvalidArgumentError, match="lacks the prelude's end"):
        after_prelude("int x;\n", "pyshmem_cpu_program_prelude_end")


def test_launches_of_a_kernel_defined_once_convert_their_arguments_at_the_launch():
    src = ("__global__ void k(int* out, const int* in, int n) {}\n"
           "__global__ void d(int* out, int n = 3) {}\n"
           "__global__ void o(int* a) {}\n__global__ void o(float* a) {}\n"
           "void f(int* p) {\n  k<<<1, 1>>>(p, NULL, 7);\n  d<<<1, 1>>>(p);\n  o<<<1, 1>>>(p);\n}\n")
    out = rewrite_chevrons(src, typed=single_kernels(src))
    assert single_kernels(src) == {"k": 3}  # d has a default argument, o is overloaded
    assert ('::pyshmem::cpu::launch_tuple(::pyshmem::cpu::chevron("k", 1, 1), false, k, '
            "::pyshmem::cpu::params_of(k)(p, NULL, 7))") in out
    assert "{ d(pyshmem_arg...); }, p)" in out and "{ o(pyshmem_arg...); }, p)" in out
