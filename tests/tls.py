"""A self-signed certificate for 127.0.0.1, made by openssl, for the
tests' TLS peers."""

import os
import ssl
import subprocess


def self_signed(tmp, name='peer', ip='127.0.0.1') -> tuple[str, str]:
    """(certificate path, key path) in ``tmp``: valid one day, for
    IP ``ip``."""
    cert = os.path.join(str(tmp), '%s.crt' % name)
    key = os.path.join(str(tmp), '%s.key' % name)
    subprocess.run(
        ['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
         'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
         '-subj', '/CN=%s' % ip, '-addext', 'subjectAltName=IP:%s' % ip,
         '-keyout', key, '-out', cert], check=True, capture_output=True)
    return cert, key


def server_context(tmp, name='peer', ip='127.0.0.1'
                   ) -> tuple[ssl.SSLContext, str]:
    """A server-side context with a fresh self-signed certificate for IP
    ``ip``, and that certificate's path (a client's CA bundle)."""
    cert, key = self_signed(tmp, name, ip)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return ctx, cert
