"""benchmarks/search_scaled_mm.py, the H200 search of block-wise torch._scaled_mm, run on the
CPU over its emulated kernel (wrong where K spans two or three 128-blocks) on smaller axes."""

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "search_scaled_mm.py"


def load():
    spec = importlib.util.spec_from_file_location("search_scaled_mm", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_finds_the_emulated_k_region_and_writes_its_figures(tmp_path, monkeypatch, capsys):
    script = load()
    monkeypatch.setattr(
        script,
        "searches",
        lambda emulate: [
            ("k at 256x512", dict(m=256, n=512, k=(128, 1024, 128))),
            ("m, n, k", dict(m=(128, 512, 128), n=(128, 512, 128), k=(128, 1024, 128))),
        ],
    )
    assert script.main(["--emulate", "--json", str(tmp_path / "out.json"), "--repeat", "2"]) == 0
    figures = json.loads((tmp_path / "out.json").read_text())
    by_name = {search["name"]: search for search in figures["searches"]}
    fixed = by_name["k at 256x512"]
    assert fixed["failing_k"] == [256, 384] and fixed["minimal"]["k"] == 256
    k = fixed["boundary"]["k"]
    assert {name: k[name] for name in ("fails", "passes", "below", "above", "fails_up_to")} == {
        "fails": 256,
        "passes": 128,
        "below": 128,
        "above": 512,
        "fails_up_to": 384,
    }
    assert k["evidence"]["below"]["established"] and k["evidence"]["above"]["established"]
    assert by_name["sweep k at 256x512"]["failing_k"] == [256, 384]
    assert by_name["sweep k at 256x512"]["passing_k"] == [128, 512, 640, 768, 896, 1024]
    everywhere = by_name["m, n, k"]
    assert everywhere["case"] == (
        'gemmcheck.case("torch_scaled_mm_blockwise", m=128, n=128, k=256, quant="blockscale")'
    )
    first = everywhere["first_failing"]
    assert first["config"]["k"] in (256, 384) and 1 <= first["probe"] <= everywhere["probes"]
    assert "K failing: [256, 384]" in capsys.readouterr().out
