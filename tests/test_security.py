"""Security: the API key is never written nor printed; no code path can run model text (a scan
of the package source); server URLs are http(s) only; unreachable servers are one clear line."""

from __future__ import annotations

import ast
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.threaded_server import serve

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "llmeval"
KEY = "sk-llmeval-SECRET-7f3a9c1e5b"
AIME = ROOT / "data" / "aime24.jsonl"

# Calls that can run code held in a string (or unpickle untrusted bytes).
BANNED_NAMES = {"eval", "exec", "compile", "__import__", "sympify", "S", "parse_expr",
                "simplify", "parse_latex"}  # fmt: skip
# As methods (`sympy.sympify`, `self.eval`); not `compile`: `re.compile` is everywhere.
BANNED_METHODS = BANNED_NAMES - {"compile", "__import__"}
BANNED_ATTRS = BANNED_METHODS | {"loads", "load", "system", "popen", "Unpickler"}
PICKLERS = {"pickle", "cPickle", "dill", "marshal", "shelve", "yaml", "cloudpickle"}
# (file relative to the package, called name): why it is safe. None at present.
# the sandbox's runner: its source is passed with `python -c` to each sandboxed call, the only
# place model-written code runs (never in llmeval's process: llmeval reads its constants alone)
_RUNNER = "runs inside the sandbox's own process, never in llmeval's"
ALLOWED: dict[tuple[str, str], str] = {
    ("sandbox/runner.py", "exec"): _RUNNER,
    ("sandbox/runner.py", "compile"): _RUNNER,
    ("sandbox/runner.py", "loads"): "marshal: llmeval's own (code, setup) pair, " + _RUNNER,
}


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "llmeval", *argv], capture_output=True,
                          text=True, env=full, timeout=300)  # fmt: skip


def _files_holding(folder: Path, needle: str) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def _infer_argv(url: str, out: Path, *extra: str) -> list[str]:
    return ["infer", "--input", str(AIME), "--output", str(out), "--base-url", url, "--n-samples",
            "1", "--progress", "plain", "--progress-interval", "0.1", *extra]  # fmt: skip


@pytest.mark.parametrize("how", ["flag", "env", "url"])
def test_the_api_key_is_never_written_nor_printed(how: str, tmp_path: Path) -> None:
    out = tmp_path / "aime24_run.jsonl"
    with serve(api_key=KEY) as srv:
        url = srv.url.replace("http://", f"http://user:{KEY}@") if how == "url" else srv.url
        extra = ["--api-key", KEY] if how != "env" else []
        done = _run(*_infer_argv(url, out, *extra), env={"OPENAI_API_KEY": KEY})
        assert done.returncode == 0, done.stderr
        assert srv.server.auth_seen == {f"Bearer {KEY}"}  # the key did reach the server
        wrong = _run(*_infer_argv(srv.url, tmp_path / "w.jsonl", "--api-key", KEY + "x"))
    assert wrong.returncode == 4 and "401" in wrong.stderr
    judged = []
    if how == "flag":  # eval and report write what they read: check their files once
        judged = [
            _run("eval", str(out), "--result-json", str(tmp_path / "r.json"),
                 "--export-verdicts", str(tmp_path / "v.jsonl")),
            _run("report", str(out), "--out", str(tmp_path / "r.html"), "--no-compress"),
        ]  # fmt: skip
    for proc in (done, wrong, *judged):
        assert proc.returncode in (0, 4), proc.stderr
        assert KEY not in proc.stdout + proc.stderr
    assert len(list(tmp_path.iterdir())) >= (5 if how == "flag" else 2)  # outputs and specs
    assert _files_holding(tmp_path, KEY) == []


ECHOED = "sk-echoed-SECRET-4d2b8a6f1c"  # the wrong key a gateway quotes back in its 401


@pytest.mark.parametrize("how", ["--api-key", "OPENAI_API_KEY", "--judge-api-key", "run_infer.sh"])
def test_a_key_the_server_quotes_back_is_never_printed_nor_written(
    how: str, tmp_path: Path
) -> None:
    """A gateway's 401 quoting the Authorization header (`Bearer <key>`) and the key itself:
    every stream and every file written shows `***` in their place (the key was printed,
    and written into run_infer.sh's log)."""
    out = tmp_path / "aime24.jsonl"
    with serve(api_key=KEY, echo_auth=True) as srv:
        if how == "--judge-api-key":
            assert _run(*_infer_argv(srv.url, out, "--api-key", KEY)).returncode == 0
            done = _run("eval", str(out), "--judge-url", srv.url, "--judge-model", "test-model",
                        "--judge-api-key", ECHOED, "--result-json", str(tmp_path / "r.json"),
                        "--export-verdicts", str(tmp_path / "v.jsonl"))  # fmt: skip
        elif how == "run_infer.sh":
            (tmp_path / "data").mkdir()
            (tmp_path / "data" / "aime24.jsonl").write_bytes(AIME.read_bytes())
            env = {**os.environ, "PYTHONPATH": str(ROOT), "TASKS": "aime24", "N_SAMPLES": "1",
                   "INPUT_DIR": str(tmp_path / "data"), "OUTPUT_DIR": str(tmp_path / "out"),
                   "BASE_URLS": srv.url, "MODEL": "test-model", "OPENAI_API_KEY": ECHOED,
                   "LLMEVAL": f"{sys.executable} -m llmeval"}  # fmt: skip
            done = subprocess.run(["bash", str(ROOT / "scripts" / "run_infer.sh")], env=env,
                                  capture_output=True, text=True, timeout=300)  # fmt: skip
        else:
            extra = ["--api-key", ECHOED] if how == "--api-key" else []
            done = _run(*_infer_argv(srv.url, out, *extra), env={"OPENAI_API_KEY": ECHOED})
    assert done.returncode == 4, done.stderr
    assert "(Authorization: Bearer ***; key *** unknown)" in done.stderr
    assert ECHOED not in done.stdout + done.stderr
    assert _files_holding(tmp_path, ECHOED) == []
    if how == "run_infer.sh":
        assert "key *** unknown" in (tmp_path / "out" / "logs" / "aime24.log").read_text()


def test_a_password_in_a_file_someone_else_wrote_is_never_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run spec and rows written by another tool (or an older llmeval) with a password in
    their URLs: eval and report show those URLs without it."""
    from llmeval.cli.main import main

    out = tmp_path / "aime24.jsonl"
    with serve() as srv:
        assert main(_infer_argv(srv.url, out, "--progress", "plain")) == 0
        secret_url = srv.url.replace("http://", f"http://user:{KEY}@")
    spec = out.with_name(out.name + ".spec.json")
    spec.write_text(spec.read_text().replace(srv.url, secret_url))
    out.write_text(out.read_text().replace(srv.url, secret_url))
    assert KEY in spec.read_text() and KEY in out.read_text()
    report, result = tmp_path / "r.html", tmp_path / "r.json"
    assert main(["eval", str(out), "--result-json", str(result), "--no-progress"]) == 0
    assert main(["report", str(out), "--out", str(report), "--no-compress"]) == 0
    said = capsys.readouterr()
    assert KEY not in said.out + said.err
    assert srv.url in report.read_text()  # the endpoint and the spec's server, shown
    assert _files_holding(tmp_path, KEY) == ["aime24.jsonl", "aime24.jsonl.spec.json"]


# --- no code path hands text to an evaluator -------------------------------------------------


def banned_calls(source: str, filename: str = "<src>") -> list[tuple[int, str]]:
    """(line, name) of every call in `source` that can run code held in a string."""
    tree = ast.parse(source, filename)
    aliases = {}  # local name -> imported name, for `from sympy import sympify as sp`
    modules = {}  # local name -> module, for `import pickle as pk`
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                aliases[a.asname or a.name] = a.name
                if (node.module or "").split(".")[0] in PICKLERS:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                modules[a.asname or a.name] = a.name
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        for k in node.keywords:
            if k.arg == "shell" and not (isinstance(k.value, ast.Constant) and not k.value.value):
                found.append((node.lineno, "shell=True"))
        if isinstance(func, ast.Name):
            real = aliases.get(func.id, func.id)
            if real in BANNED_NAMES or real.split(".")[0] in PICKLERS:
                found.append((node.lineno, real))
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else ""
            module = modules.get(owner, owner)
            risky = module in PICKLERS | {"os"} and func.attr in BANNED_ATTRS
            if func.attr in BANNED_METHODS or risky:
                found.append((node.lineno, func.attr))
    return found


def test_the_scanner_finds_every_kind_of_evaluator() -> None:
    src = (
        "import pickle as pk, os, subprocess\nfrom sympy import sympify as sp, S\n"
        "from sympy.parsing.sympy_parser import parse_expr\nimport sympy\n"
        "eval(x)\nexec(x)\nsp(x)\nS(x)\nparse_expr(x)\nsympy.simplify(x)\npk.loads(b)\n"
        "os.system(x)\nsubprocess.run(x, shell=True)\nsympy.sympify(x)\ncompile(x, 'f', 'exec')\n"
        "subprocess.run(['ls'], shell=False)\nre.compile('a')\n"
    )
    names = [name for _, name in banned_calls(src)]
    assert names == ["eval", "exec", "sympify", "S", "parse_expr", "simplify", "loads",
                     "system", "shell=True", "sympify", "compile"]  # fmt: skip


def test_no_evaluator_is_called_anywhere_in_the_package() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, name in banned_calls(path.read_text(encoding="utf-8"), rel):
            if (rel, name) not in ALLOWED:
                found.append(f"llmeval/{rel}:{line}: {name}")
    assert found == [], "calls that can run text:\n" + "\n".join(found)


# --- server URLs and unreachable servers ---------------------------------------------------


NOT_HTTP = ["file:///etc/passwd", "ftp://127.0.0.1/v1", "unix:///tmp/s", "javascript:alert(1)",
            "127.0.0.1:8000", "http:///v1", "gopher://x"]  # fmt: skip


@pytest.mark.parametrize("url", NOT_HTTP)
def test_only_http_and_https_urls(url: str, tmp_path: Path) -> None:
    done = _run(*_infer_argv(url, tmp_path / "o.jsonl"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "expected an http:// or https:// URL" in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "o.jsonl").exists()


MALFORMED = ["http://[::1/v1", "http://u:pw-9z@[::1/v1", "http://h:99999/v1", "http://h:abc/v1",
             "http://a b/v1", "http://[zz]/v1"]  # fmt: skip


@pytest.mark.parametrize("url", MALFORMED)
def test_a_malformed_url_is_one_line_naming_its_flag(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from llmeval.cli.main import main

    gens = tmp_path / "aime24.jsonl"
    gens.write_text('{"problem_id": "1", "sample_idx": 0, "answer": "3", "gen": "\\\\boxed{3}"}\n')
    for argv, flag in [
        (_infer_argv(url, tmp_path / "o.jsonl"), "--base-url"),
        (["eval", str(gens), "--judge-url", url, "--judge-model", "m"], "--judge-url"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        (line,) = err.strip().splitlines()
        assert line.startswith(f"llmeval {argv[0]}: error: {flag} ") and "pw-9z" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["aime24.jsonl"]


@pytest.fixture(scope="module")
def hang_up_port() -> Iterator[int]:
    """A port that accepts connections and closes them at once."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                sock.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    stop.set()
    thread.join()
    sock.close()


@pytest.mark.parametrize(
    "where", ["refused", "unknown host", "hangs up", "tls to a hang-up", "404", "a password"]
)
def test_unreachable_server_is_one_clear_line(
    where: str, hang_up_port: int, tmp_path: Path
) -> None:
    with serve() as srv:
        url = {
            "refused": "http://127.0.0.1:1/v1",
            "unknown host": "http://no-such-host.invalid:8000/v1",
            "hangs up": f"http://127.0.0.1:{hang_up_port}/v1",
            "tls to a hang-up": f"https://127.0.0.1:{hang_up_port}/v1",
            "404": srv.url.replace("/v1", "/elsewhere/v1"),
            "a password": f"http://user:{KEY}@127.0.0.1:1/v1",
        }[where]
        done = _run(*_infer_argv(url, tmp_path / "o.jsonl", "--timeout", "5",
                                 "--max-retries", "1", "--retry-delay", "0.01"))  # fmt: skip
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("llmeval infer: error: ")]
    assert len(errors) == 1, done.stderr
    assert "exec format error" not in errors[0]  # an SSL code read as an OS errno
    assert KEY not in done.stderr + done.stdout
    if where == "404":
        assert "HTTP 404" in errors[0]
    elif where == "a password":
        assert "cannot reach http://127.0.0.1:1/v1" in errors[0]
    else:
        assert "cannot reach" in errors[0] and url.split("/v1")[0] in errors[0]
