"""TLS on the RESP port (`engram serve --tls-cert C --tls-key K`): redis-py over TLS with the
certificate as its trust root; a plain-text client gets no answer; a bad key or certificate file
is refused at start with the file named. The certificate is made here (self-signed, for
127.0.0.1), nothing is fetched."""

import datetime
import ipaddress
import shutil
import socket
import subprocess

import pytest
import redis
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import ENGRAM, Server


def self_signed(folder):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "engram test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def test_redis_py_over_tls_and_plain_text_gets_nothing(tmp_path):
    cert, key = self_signed(tmp_path)
    s = Server(tmp_path / "db", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        r = redis.Redis(host=s.host, port=s.port, ssl=True, ssl_ca_certs=str(cert), protocol=3, socket_timeout=10)
        assert r.ping()
        r.execute_command("ENGRAM.QUERY", "t", "CREATE (:T {name: 'over tls'})")
        assert r.execute_command("ENGRAM.QUERY", "t", "MATCH (n:T) RETURN n.name")[b"rows"] == [[b"over tls"]]
        # redis-py's own URL form.
        assert redis.Redis.from_url(f"rediss://{s.host}:{s.port}", ssl_ca_certs=str(cert), socket_timeout=10).ping()
        # A client that does not trust the certificate refuses it.
        with pytest.raises(redis.exceptions.ConnectionError):
            redis.Redis(host=s.host, port=s.port, ssl=True, socket_timeout=10).ping()
        # Plain text is not RESP to this port: no reply, the connection is closed.
        with socket.create_connection((s.host, s.port), timeout=10) as raw:
            raw.sendall(b"*1\r\n$4\r\nPING\r\n")
            try:
                got = raw.recv(100)
            except (ConnectionResetError, socket.timeout):
                got = b""
            assert b"PONG" not in got
        assert r.ping(), "the server still serves TLS clients"
        # redis-cli over TLS, trusting the certificate.
        cli = shutil.which("redis-cli")
        if cli is None:
            pytest.fail("redis-cli is not installed (.ci/run installs redis-tools)")
        out = subprocess.run([cli, "--tls", "--cacert", str(cert), "-h", s.host, "-p", str(s.port), "ENGRAM.QUERY", "t", "MATCH (n:T) RETURN count(n)"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and "rows" in out.stdout and "1" in out.stdout, (out.stdout, out.stderr)
    finally:
        assert s.stop() == 0


def test_the_http_api_over_tls(tmp_path):
    import http.client
    import json
    import ssl
    import urllib.error
    import urllib.request

    cert, key = self_signed(tmp_path)
    s = Server(tmp_path / "db", "--http-port", "0", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        assert s.http.startswith("https://")
        trusted = ssl.create_default_context(cafile=str(cert))
        body = json.dumps({"query": "CREATE (:H {name: 'https'}) RETURN 1 AS one"}).encode()
        req = urllib.request.Request(f"{s.http}/v1/workspaces/h/query", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=trusted, timeout=30) as resp:
            assert json.loads(resp.read())["rows"] == [[1]]
        with urllib.request.urlopen(f"{s.http}/healthz", context=trusted, timeout=30) as resp:
            assert resp.status == 200
        # Not trusted: refused by the client; plain HTTP to the port: no HTTP answer.
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(f"{s.http}/healthz", context=ssl.create_default_context(), timeout=30)
        with pytest.raises((urllib.error.URLError, OSError, http.client.HTTPException)):
            urllib.request.urlopen(s.http.replace("https://", "http://") + "/healthz", timeout=30).read()
        r = redis.Redis(host=s.host, port=s.port, ssl=True, ssl_ca_certs=str(cert), protocol=3, socket_timeout=10)
        assert r.execute_command("ENGRAM.QUERY", "h", "MATCH (n:H) RETURN n.name")[b"rows"] == [[b"https"]]
    finally:
        assert s.stop() == 0


def test_a_bad_certificate_or_key_is_refused_at_start_naming_the_file(tmp_path):
    cert, key = self_signed(tmp_path)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a pem file\n")
    (tmp_path / "other").mkdir()
    other_cert, _ = self_signed(tmp_path / "other")
    for args, named in [
        (["--tls-cert", str(junk), "--tls-key", str(key)], "junk.pem"),
        (["--tls-cert", str(cert), "--tls-key", str(junk)], "junk.pem"),
        (["--tls-cert", str(other_cert), "--tls-key", str(key)], "cert.pem"),
        (["--tls-cert", str(cert)], "--tls-key"),
    ]:
        res = subprocess.run([ENGRAM, "serve", str(tmp_path / "db"), "--port", "0", *args], capture_output=True, text=True, timeout=60)
        assert res.returncode != 0 and named in res.stderr, (args, res.stderr)
        assert "listening" not in res.stdout
