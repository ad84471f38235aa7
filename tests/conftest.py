"""Suite-wide settings: offline Hugging Face, and the shared real Label Studio fixtures."""

import os

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest_plugins = ["tests.support.label_studio", "tests.support.system", "tests.support.demo"]
