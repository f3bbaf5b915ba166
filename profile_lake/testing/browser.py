"""A real browser for the tests and the screenshots: Debian's headless Chromium, driven by
selenium through Debian's chromedriver (both installed by `make setup`), and a local HTTP
server for a folder (the dbt docs site).

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
INSTALL_HINT = "run `make setup` (apt-get install chromium chromium-driver)"


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
