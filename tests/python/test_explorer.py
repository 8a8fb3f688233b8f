"""The Explorer page in a real browser: Debian's headless Chromium driven by Selenium, against
`engram serve --http-port` holding the example story. It searches AuthService, expands a
neighbour in the graph, reads the context an agent is handed about an entity (and its
neighbourhood ranked by a question), moves the time slider, runs a query and a recall, and checks the DOM; a
screenshot of each step is written under target/explorer/. A signed-in user sees only what its
grants allow."""

import json
import os
import pathlib
import shutil
import subprocess
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import ENGRAM, ROOT, Server
from test_http import STORY

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SHOTS = ROOT / "target" / "explorer"

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMEDRIVER), reason="chromium-driver is not installed (.ci/run installs it)")


@pytest.fixture
def browser(tmp_path):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
              f"--user-data-dir={tmp_path / 'profile'}"]:
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read())


def wait(driver, cond, timeout=15):
    return WebDriverWait(driver, timeout).until(cond)


def shot(driver, name):
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


def test_explorer_walks_the_story(tmp_path, browser):
    s = Server(tmp_path / "db", "--http-port", "0")
    try:
        post(s.http, "/v1/workspaces/story/ingest", STORY)
        d = browser
        d.get(s.http + "/")
        wait(d, lambda d: "story" in [o.get_attribute("value") for o in d.find_elements(By.CSS_SELECTOR, "#workspace option")])
        Select(d.find_element(By.ID, "workspace")).select_by_value("story")
        assert "signed in as default" in d.find_element(By.ID, "whoami").text
        shot(d, "1-start")

        d.find_element(By.ID, "search").send_keys("auth")
        d.find_element(By.ID, "search-btn").click()
        hit = wait(d, EC.element_to_be_clickable((By.CSS_SELECTOR, "#search-results li.result")))
        assert "AuthService" in hit.text
        hit.click()
        wait(d, EC.text_to_be_present_in_element((By.ID, "entity-name"), "AuthService"))
        rows = d.find_elements(By.CSS_SELECTOR, "#claims tbody tr")
        assert len(rows) == 3
        deprecated = d.find_elements(By.CSS_SELECTOR, "#claims tbody tr.deprecated")
        assert len(deprecated) == 1 and "Kafka" in deprecated[0].text and "c1/m1" in deprecated[0].text
        assert len(d.find_elements(By.CSS_SELECTOR, "#graph g.node")) == 4
        assert len(d.find_elements(By.CSS_SELECTOR, "#graph line.edge.deprecated")) == 1
        labels = {e.text for e in d.find_elements(By.CSS_SELECTOR, "#graph text.label")}
        assert {"streams_events_with", "depends_on"} <= labels
        # What an agent is handed about it: the deprecated Kafka claim is not in its context.
        wait(d, EC.text_to_be_present_in_element((By.ID, "entity-context"), "Kinesis"))
        assert "Kafka" not in d.find_element(By.ID, "entity-context").text
        assert d.find_element(By.ID, "context-tokens").text.endswith("· graph")
        shot(d, "2-authservice")

        # Its neighbourhood ranked by a question (no embedder here: the lexical path), which
        # keeps the facts the question matches.
        d.find_element(By.ID, "context-text").send_keys("where do its events go?")
        d.find_element(By.ID, "context-btn").click()
        wait(d, EC.text_to_be_present_in_element((By.ID, "context-tokens"), "graph + lexical"))
        asked = d.find_element(By.ID, "entity-context").text
        assert "Kinesis" in asked and "UserDB" not in asked, asked
        d.find_element(By.ID, "context-text").clear()

        # Expand a neighbour by clicking it in the graph.
        d.find_element(By.CSS_SELECTOR, '#graph g.node[data-id="database:userdb"] circle').click()
        wait(d, EC.text_to_be_present_in_element((By.ID, "entity-name"), "UserDB"))
        assert "← AuthService reads users from UserDB" in d.find_element(By.ID, "claims").text
        assert d.find_element(By.CSS_SELECTOR, '#graph g.node[data-id="database:userdb"]').get_attribute("class") == "node focus"
        shot(d, "3-expanded")

        # The time slider: before anything was recorded, no edge is valid.
        slider = d.find_element(By.ID, "asof")
        d.execute_script("arguments[0].value = 0; arguments[0].dispatchEvent(new Event('input'));", slider)
        wait(d, lambda d: d.find_element(By.ID, "asof-label").text != "now")
        wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#graph line.edge")) == 0)
        wait(d, EC.text_to_be_present_in_element((By.ID, "context-tokens"), "· 0 facts"))
        assert d.find_element(By.ID, "entity-context").text == ""
        d.execute_script("arguments[0].value = 1000; arguments[0].dispatchEvent(new Event('input'));", slider)
        wait(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#graph line.edge")) == 3)
        wait(d, EC.text_to_be_present_in_element((By.ID, "entity-context"), "AuthService"))
        shot(d, "4-time")

        q = d.find_element(By.ID, "query")
        q.clear()
        q.send_keys("MATCH (s:service)-[r]->(o) RETURN o.name ORDER BY o.name")
        d.find_element(By.ID, "query-btn").click()
        wait(d, EC.presence_of_element_located((By.CSS_SELECTOR, "#query-result tbody tr")))
        cells = [c.text for c in d.find_elements(By.CSS_SELECTOR, "#query-result tbody td")]
        assert cells == ["Kinesis", "UserDB"], cells
        shot(d, "5-query")

        d.find_element(By.ID, "recall").send_keys("what does AuthService stream its events with?")
        d.find_element(By.ID, "recall-btn").click()
        wait(d, EC.text_to_be_present_in_element((By.ID, "recall-context"), "Kinesis"))
        assert "tokens" in d.find_element(By.ID, "recall-tokens").text
        facts = d.find_elements(By.CSS_SELECTOR, "#recall-facts tbody tr")
        assert facts and "lexical #1" in facts[0].text
        shot(d, "6-recall")
        assert d.find_element(By.ID, "error").text == ""
    finally:
        s.stop()


def test_explorer_signs_in_and_shows_only_what_the_user_may_see(tmp_path, browser):
    folder = tmp_path / "db"
    s = Server(folder, "--http-port", "0")
    post(s.http, "/v1/workspaces/story/ingest", STORY)
    post(s.http, "/v1/workspaces/hidden/query", {"query": "CREATE (:Secret {name: 'TopSecret'})"})
    assert s.stop() == 0
    for name, pw in [("reader", "read-pw"), ("admin", "adm-pw")]:
        subprocess.run([ENGRAM, "user", "add", str(folder), name, "--password-stdin"], input=pw + "\n", text=True, check=True, timeout=60)
    subprocess.run([ENGRAM, "user", "grant", str(folder), "reader", "story", "read"], check=True, timeout=60)
    s = Server(folder, "--http-port", "0")
    try:
        d = browser
        d.get(s.http + "/")
        wait(d, EC.visibility_of_element_located((By.ID, "login")))
        d.find_element(By.ID, "login-user").send_keys("reader")
        d.find_element(By.ID, "login-password").send_keys("read-pw")
        d.find_element(By.ID, "login-btn").click()
        wait(d, EC.text_to_be_present_in_element((By.ID, "whoami"), "signed in as reader"))
        options = [o.get_attribute("value") for o in d.find_elements(By.CSS_SELECTOR, "#workspace option")]
        assert options == ["story"]
        assert "TopSecret" not in d.page_source
        shot(d, "7-signed-in")
    finally:
        s.stop()
