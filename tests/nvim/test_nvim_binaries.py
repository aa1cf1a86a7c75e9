"""The choice of Neovim binaries: a missing version is a skip with the reason here, a failure in CI."""

from __future__ import annotations

import pytest

from tests.nvim import binaries


def test_missing_version_is_skipped_with_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binaries, "find_nvim", lambda version: None)
    monkeypatch.delenv(binaries.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"Neovim 0\.11 is not installed: make setup"):
        binaries.require_nvim("0.11")


def test_missing_version_fails_where_ci_requires_every_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binaries, "find_nvim", lambda version: None)
    monkeypatch.setenv(binaries.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=r"Neovim 0\.7 is not installed: apt-get install neovim"):
        binaries.require_nvim("0.7")


def test_versions_are_told_apart() -> None:
    found = {version: binaries.find_nvim(version) for version in binaries.VERSIONS}
    for version, binary in found.items():
        if binary is not None:
            assert binaries._version_of(binary) == version
    assert found["0.7"] is None or found["0.7"] != found["0.11"]
