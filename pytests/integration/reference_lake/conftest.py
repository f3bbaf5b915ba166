"""The reference lake of this folder's modules: two generated waves (pytests/support/two_waves.py)
built by one uninterrupted run each. The folder is one xdist group (SHARED_LAKE_FOLDERS in
pytests/conftest.py), so one worker builds the reference once for every module here."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytests.support.dbt_runner import run_dbt
from pytests.support.two_waves import SELECTION, ReferenceLake, Waves, generate_waves


@pytest.fixture(scope="session")
def waves(tmp_path_factory) -> Waves:
    return generate_waves(tmp_path_factory.mktemp("waves"))


@pytest.fixture(scope="session")
def reference(spark, lake_home: Path, waves: Waves, tmp_path_factory) -> ReferenceLake:
    """Both waves built in uninterrupted runs of this process, for every tenant: one ingest
    batch per wave."""
    lake = ReferenceLake("waves_reference", tmp_path_factory.mktemp("reference-landing"), lake_home)
    for wave in range(len(waves.files)):
        waves.land(wave, lake.landing)
        run_dbt(["build", *SELECTION], env=lake.env(), target_path=lake.target_path())
    return lake
