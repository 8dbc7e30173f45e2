"""The source rewrites pyshmem-nvcc --cpu applies (pyshmem/_cuda_source.py): launches,
kernel registration, and what they must leave alone."""

import pytest

from pyshmem._cuda_source import register_kernels, rewrite_chevrons, single_kernels
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


def test_non_template_kernel_definitions_are_registered():
    src = ("template <class T> __global__ void tk(T* p, int n = 3) {}\n"
           "__global__ void __launch_bounds__(128) k1(int* a, float b = 2.0f) { if (a) {} }\n"
           'extern "C" __global__ void k2(void) {}\n'
           "__global__ void decl(int);\n"
           "namespace ns { __global__ void k3(int* a,\n int n) { } }\n")
    out = register_kernels(src)
    assert out.count("\n") == src.count("\n")
    assert "register_kernel(static_cast<void (*)(int* a, float b)>(k1), \"k1\")" in out
    assert "register_kernel(static_cast<void (*)()>(k2), \"k2\")" in out
    assert "register_kernel(static_cast<void (*)(int* a, int n)>(k3), \"k3\"); }" in out  # inside the namespace
    assert "(tk)" not in out and "(decl)" not in out


def test_a_comment_saying_template_does_not_hide_a_kernel():
    src = ("// A note: this is not a template kernel; it is plain.\n"
           "#define MAXT(a, b) ((a) > (b) ? (a) : (b))\n"
           "__global__ void __launch_bounds__(MAXT(64, 128)) k(int* a) {}\n"
           "template <class T>  // a template; this one is not registered\n"
           "__global__ void t(T* a) {}\n")
    out = register_kernels(src)
    assert 'register_kernel(static_cast<void (*)(int* a)>(k), "k")' in out
    assert "(t)" not in out


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
