"""The one ``models:`` shape: parsed values, and errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clients import ClientConfigError, Limits, RetryPolicy, parse_models

REPO = Path(__file__).resolve().parents[2]


def test_a_full_section_parses_to_values(tmp_path: Path) -> None:
    raw = {
        "cache_dir": "cache/models",
        "retry": {"max_attempts": 3, "base_delay_s": 0.5},
        "limits": {"openai": {"concurrency": 8, "requests_per_second": 5}, "local": {"timeout_s": 9}},
        "vlm": {"backend": "openai", "model": "qwen", "base_url": "http://x/v1", "limit_group": "local",
                "api_key_env": ["A_KEY", "B_KEY"]},
        "llm": None,
    }
    cfg = parse_models(raw, "p.yaml", roles=("vlm", "llm"), defaults={"max_tokens": 1024}, base_dir=tmp_path)
    assert cfg.cache_dir == str(tmp_path / "cache/models")
    assert cfg.retry == RetryPolicy(max_attempts=3, base_delay_s=0.5, max_delay_s=30.0)
    vlm = cfg.spec("vlm")
    assert vlm is not None and cfg.spec("llm") is None
    assert (vlm.name, vlm.limit_group, vlm.max_tokens) == ("qwen", "local", 1024)
    assert vlm.api_key_env == ("A_KEY", "B_KEY")
    assert cfg.limits_for(vlm) == Limits(concurrency=4, timeout_s=9)
    client = cfg.client("vlm", label="captions")
    assert (client.label, client.cache_dir, client.limits.timeout_s) == ("captions", cfg.cache_dir, 9)
    with pytest.raises(ClientConfigError, match=r"p\.yaml: models\.llm: no model configured"):
        cfg.client("llm")


@pytest.mark.parametrize(("raw", "message"), [
    ({"cache": "x"}, r"p\.yaml: models\.cache: unknown key \(expected cache_dir, retry, limits, vlm\)"),
    ({"retry": {"attempts": 3}}, r"p\.yaml: models\.retry: unknown keys \['attempts'\]"),
    ({"retry": {"max_attempts": 0}}, r"p\.yaml: models\.retry: max_attempts must be >= 1"),
    ({"limits": {"openai": {"concurrency": 0}}},
     r"p\.yaml: models\.limits\.openai: concurrency must be >= 1"),
    ({"limits": [1]}, r"p\.yaml: models\.limits: must map a limit group"),
    ({"vlm": {"model": "m"}}, r"p\.yaml: models\.vlm\.backend: required"),
    ({"vlm": {"backend": "llama", "model": "m"}}, r"p\.yaml: models\.vlm: backend must be one of"),
    ({"vlm": {"backend": "openai", "model": "m", "temprature": 0}},
     r"p\.yaml: models\.vlm: unknown keys \['temprature'\]"),
    ({"vlm": {"backend": "openai", "model": "m", "api_key": "sk-1"}},
     r"p\.yaml: models\.vlm\.api_key: put the API key"),
    ({"cache_dir": 3}, r"p\.yaml: models\.cache_dir: must be a directory path or null"),
    ([], r"p\.yaml: models: must be a mapping"),
])
def test_errors_name_the_file_and_the_key(raw: object, message: str) -> None:
    with pytest.raises(ClientConfigError, match=message):
        parse_models(raw, "p.yaml", roles=("vlm",))


def test_a_secret_never_appears_in_an_error() -> None:
    with pytest.raises(ClientConfigError) as err:
        parse_models({"vlm": {"backend": "openai", "model": "m", "api_key": "sk-secret-1"}}, "p.yaml",
                     roles=("vlm",))
    assert "sk-secret-1" not in str(err.value)


def test_the_three_configs_use_the_shape() -> None:
    def models(name: str) -> object:
        return yaml.safe_load((REPO / "configs" / name).read_text())["models"]

    sv = parse_models(models("streamvibe.yaml"), "streamvibe.yaml", roles=("generator",), base_dir=REPO)
    assert sv.cache_dir == str(REPO / ".cache/streamvibe/gemini") and sv.retry.max_attempts == 4
    gen = sv.spec("generator")
    assert gen is not None and (gen.backend, gen.model) == ("gemini", "gemini-3.8-flash")
    assert sv.limits_for(gen) == Limits(concurrency=4, timeout_s=120)
    pr = parse_models(models("proready.yaml"), "proready.yaml", roles=("vlm", "llm"), base_dir=REPO)
    assert pr.cache_dir == str(REPO / ".cache/proready-models") and pr.roles == {"vlm": None, "llm": None}
    probes = parse_models(models("probes.example.yaml"), "probes.example.yaml")
    assert probes.cache_dir == ".cache/probes" and probes.limits["local-vllm"].concurrency == 32
