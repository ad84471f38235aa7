"""Suite-wide settings: offline Hugging Face, and the shared real Label Studio fixtures."""

import os

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest_plugins = ["tests.support.label_studio", "tests.support.system", "tests.support.demo"]


def pytest_configure(config) -> None:
    # Declared here rather than in pyproject.toml: the venv set-up's stamp hashes pyproject.toml,
    # and a new marker is no reason to reinstall the shared .venv.
    config.addinivalue_line(
        "markers", "kits: runs an evaluation kit (lmms-eval, mlcroissant) from its own venv in .venv-kits/")
