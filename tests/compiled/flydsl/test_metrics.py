from pytest_gemmcheck.compiled.flydsl.metrics import compare_metrics, kernel_metrics, metrics_from_asm
from pytest_gemmcheck.compiled.lint.asm import parse


def test_metrics_of_the_compiled_example(example_asm):
    metrics = metrics_from_asm(example_asm["fp8_tail_gemm_fixed_k512"])
    assert metrics == {
        "fp8_tail_gemm_0": {
            "vgpr_count": 206,
            "agpr_count": 0,
            "sgpr_count": 41,
            "vgpr_spill_count": 0,
            "sgpr_spill_count": 0,
            "lds_bytes": 65536,  # two stages of a 16 KiB A tile and a 16 KiB B tile
            "scratch_bytes": 0,
            "mfma_count": 64,  # 4 K steps x 16 MFMA 16x16x128
            "lds_dma_count": 32,  # 4 tiles x 8 loads per wave
            "instruction_count": 903,
        }
    }


def test_descriptor_fallback_without_metadata(asm_kernel):
    text = asm_kernel("\tv_mfma_f32_16x16x32_fp8_fp8 a[0:3], v[0:1], v[2:3], a[0:3]\n", prologue=False)
    text = text.replace(
        "\t.amdgpu_metadata",
        "\t.amdhsa_kernel k\n\t\t.amdhsa_group_segment_fixed_size 2048\n"
        "\t\t.amdhsa_next_free_vgpr 40\n\t.end_amdhsa_kernel\n\t.amdgpu_metadata",
    )
    kernel = parse(text).kernels["k"]
    kernel.metadata = {}
    metrics = kernel_metrics(kernel)
    assert (metrics["lds_bytes"], metrics["vgpr_count"], metrics["mfma_count"]) == (2048, 40, 1)


def test_compare_reports_a_new_spill_and_a_changed_lds_size():
    base = {"vgpr_count": 200, "vgpr_spill_count": 0, "sgpr_spill_count": 2, "lds_bytes": 65536, "mfma_count": 64}
    now = dict(base, vgpr_spill_count=12, sgpr_spill_count=0, lds_bytes=73728)
    assert compare_metrics(base, now) == [
        "new VGPR spill: 0 -> 12",
        "SGPR spills gone: 2 -> 0",
        "LDS bytes: 65536 -> 73728 (+8192)",
    ]
    assert compare_metrics(base, dict(base)) == []


def test_compare_per_kernel():
    base = {"a": {"lds_bytes": 1024}, "b": {"lds_bytes": 0}}
    now = {"a": {"lds_bytes": 2048}, "c": {"lds_bytes": 0}}
    assert compare_metrics(base, now) == [
        "a: LDS bytes: 1024 -> 2048 (+1024)",
        "b: kernel no longer compiled",
        "c: new kernel",
    ]


def test_compare_racy_and_fixed_examples(example_asm):
    racy = metrics_from_asm(example_asm["fp8_tail_gemm_racy_k512"])
    fixed = metrics_from_asm(example_asm["fp8_tail_gemm_fixed_k512"])
    # the one-line tail change moves only the instruction count
    assert compare_metrics(racy, fixed) == ["fp8_tail_gemm_0: instructions: 906 -> 903 (-3)"]
