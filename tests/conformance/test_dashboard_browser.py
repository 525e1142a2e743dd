"""The HTML dashboard in a real headless Chromium (Debian's chromium + chromium-driver, through Selenium):
it loads, the grid shows rows, and the filters change what is shown."""

import shutil
import tempfile

import pytest
from report_rows import make_report, row

from conformance import report, statuses

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
if not (CHROMIUM and DRIVER):
    pytest.skip("chromium or chromedriver is absent: apt-get install -y chromium chromium-driver",
                allow_module_level=True)

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    data = make_report([
        row("add", "float32", statuses.PASS), row("add", "int64", statuses.FALLBACK),
        row("add", "float32", statuses.PASS, variant="backward"),
        row("exp", "float32", statuses.FAIL, "values differ", family="unary"),
        row("neg", "float32", statuses.PASS, family="unary"), row("neg", "int64", statuses.ERROR, family="unary"),
    ])
    out = tmp_path_factory.mktemp("dashboard")
    report.render(data, out)
    return (out / "index.html").as_uri()


def visible_ops(driver):
    return [r.get_attribute("data-op") + ":" + r.get_attribute("data-variant")
            for r in driver.find_elements(By.CSS_SELECTOR, "#grid tbody tr") if r.is_displayed()]


def test_page_loads_and_grid_shows_rows(browser, page):
    browser.get(page)
    assert "Conformance" in browser.title
    assert sorted(visible_ops(browser)) == ["add:backward", "add:forward", "exp:forward", "neg:forward"]
    assert browser.find_element(By.ID, "shown").text == "4 of 4 rows shown"
    cells = browser.find_elements(By.CSS_SELECTOR, "#grid td.cell[data-status='FAIL']")
    assert len(cells) == 1 and cells[0].text == "FAIL"


def test_filters_change_what_is_shown(browser, page):
    browser.get(page)
    Select(browser.find_element(By.ID, "status-filter")).select_by_visible_text("FAIL")
    assert visible_ops(browser) == ["exp:forward"]
    Select(browser.find_element(By.ID, "status-filter")).select_by_visible_text("all")
    Select(browser.find_element(By.ID, "family-filter")).select_by_visible_text("unary")
    assert sorted(visible_ops(browser)) == ["exp:forward", "neg:forward"]
    Select(browser.find_element(By.ID, "dtype-filter")).select_by_visible_text("int64")
    assert visible_ops(browser) == ["neg:forward"]
    Select(browser.find_element(By.ID, "family-filter")).select_by_visible_text("all")
    Select(browser.find_element(By.ID, "variant-filter")).select_by_visible_text("backward")
    Select(browser.find_element(By.ID, "dtype-filter")).select_by_visible_text("all")
    assert visible_ops(browser) == ["add:backward"]
    assert browser.find_element(By.ID, "shown").text == "1 of 4 rows shown"


def test_a_partial_report_says_so_above_the_totals(browser, tmp_path):
    data = make_report([row("add", "float32", statuses.PASS)])
    data["partial"] = {"tests_run": 1, "tests_total": 13546, "reason": "interrupted by Ctrl-C (SIGINT)"}
    report.render(data, tmp_path)
    browser.get((tmp_path / "index.html").as_uri())
    banner = browser.find_element(By.ID, "partial")
    assert banner.is_displayed()
    assert banner.text.startswith("Partial report: 1 of 13546 tests run (interrupted by Ctrl-C (SIGINT))")
    assert banner.location["y"] < browser.find_element(By.ID, "totals").location["y"]


def test_a_finished_report_has_no_partial_banner(browser, page):
    browser.get(page)
    assert not browser.find_elements(By.ID, "partial")
