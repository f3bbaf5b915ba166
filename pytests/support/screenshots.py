"""The README's pictures, taken by the browser the tests use (`make screenshots`):

    python -m pytests.support.screenshots REPORT_HTML DOCS_TARGET_DIR OUT_DIR

writes OUT_DIR/report.png (the report's first charts) and OUT_DIR/docs_lineage.png (the
lineage graph of `records` in the dbt docs site, served locally).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pytests.support.browser import (
    chromium,
    open_docs_lineage,
    open_docs_model,
    serve_folder,
)

RECORDS = "model.profile_lake.records"


def report_screenshot(report: Path, output: Path) -> Path:
    with chromium(width=960, height=1500) as browser:
        browser.get(report.resolve().as_uri())
        browser.save_screenshot(str(output))
    return output


def lineage_screenshot(docs_target: Path, output: Path) -> Path:
    with serve_folder(docs_target) as base, chromium(width=1200, height=700) as browser:
        open_docs_model(browser, base, RECORDS)
        open_docs_lineage(browser, expanded=True)
        browser.save_screenshot(str(output))
    return output


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    report, docs_target, out = (Path(arg) for arg in argv)
    out.mkdir(parents=True, exist_ok=True)
    for written in (
        report_screenshot(report, out / "report.png"),
        lineage_screenshot(docs_target, out / "docs_lineage.png"),
    ):
        print(f"wrote {written} ({written.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
