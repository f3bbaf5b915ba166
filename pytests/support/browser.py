"""A real browser for the tests and the screenshots: Debian's headless Chromium, driven by
selenium through Debian's chromedriver (both installed by `make browser`, which `make test`
and `make screenshots` run), and a local HTTP server for a folder (the dbt docs site).

Both paths are given to selenium, so its Selenium Manager never looks for, or downloads, a
browser or a driver.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
INSTALL_HINT = "run `make browser` as root (apt-get install chromium chromium-driver)"


class BrowserMissingError(RuntimeError):
    """Chromium or chromedriver is not installed."""


def _find(names: tuple[str, ...], what: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserMissingError(f"{what} not found on PATH ({', '.join(names)}): {INSTALL_HINT}")


def chromium_paths() -> tuple[str, str]:
    """(browser, driver) executables."""
    return _find(BROWSERS, "Chromium"), _find(("chromedriver",), "chromedriver")


@contextmanager
def chromium(width: int = 1000, height: int = 800) -> Iterator[Any]:
    """A headless Chromium session (selenium WebDriver) keeping the page's console log."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = chromium_paths()
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager, should it run: no network
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()


def console_errors(driver: Any) -> list[str]:
    """The page's console messages of level error (SEVERE) since the last call."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """Serve `folder` over HTTP on 127.0.0.1 at a free port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# ---------- the dbt docs site (dbt's single-page app: Angular, the lineage graph in Cytoscape)

DOCS_WAIT_SECONDS = 60


def open_docs_model(driver: Any, base_url: str, unique_id: str) -> None:
    """Open a model's page of the docs site and wait until its columns are listed."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{base_url}/index.html#!/model/{unique_id}")
    WebDriverWait(driver, DOCS_WAIT_SECONDS).until(lambda page: docs_column_names(page))


def docs_column_names(driver: Any) -> set[str]:
    """The column names the page's columns table lists (first cell of each column's row)."""
    cells = driver.execute_script(
        "return Array.from(document.querySelectorAll('table tbody tr'))"
        ".map(row => row.cells.length ? row.cells[0].innerText.trim() : '')"
    )
    return {cell for cell in cells if cell and "\n" not in cell}


def open_docs_lineage(driver: Any, expanded: bool = False) -> None:
    """Click the page's "View Lineage Graph" button (optionally its full-screen view) and wait
    until the graph has laid out more than the model itself."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.find_element("css selector", '[title="View Lineage Graph"]').click()
    WebDriverWait(driver, DOCS_WAIT_SECONDS).until(lambda page: len(docs_lineage_names(page)) > 1)
    if expanded:
        driver.execute_script("document.querySelector('[ng-click=\"showExpanded()\"]').click()")
        driver.execute_script("window.graph.resize(); window.graph.fit()")


def docs_lineage_names(driver: Any) -> set[str]:
    """Labels of the nodes the lineage graph shows (the Cytoscape instance dbt's docs keep in
    window.graph)."""
    labels = driver.execute_script(
        "return window.graph ? window.graph.nodes().filter(n => n.visible())"
        ".map(n => n.data('label')) : []"
    )
    return set(labels or [])
