"""Reading what QEMU's ``filter-dump`` captured on a machine's network
card (a pcap file of Ethernet frames): IPv4 packets and DHCP options,
for the iPXE tests."""

import socket


def frames(pcap: bytes):
    """Each captured frame."""
    pos = 24                                    # pcap's global header
    while pos + 16 <= len(pcap):
        incl = int.from_bytes(pcap[pos + 8:pos + 12], 'little')
        yield pcap[pos + 16:pos + 16 + incl]
        pos += 16 + incl


def ipv4(frame: bytes):
    """(protocol, source, destination, payload) of an IPv4 frame, else
    None."""
    if len(frame) < 34 or frame[12:14] != b'\x08\x00':
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0f) * 4
    total = int.from_bytes(ip[2:4], 'big')
    return (ip[9], socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20]),
            ip[ihl:total])


def dhcp_options(bootp: bytes) -> dict:
    """A DHCP packet's options: number -> bytes."""
    options, i = {}, 240
    while i < len(bootp) and bootp[i] != 255:
        if bootp[i] == 0:
            i += 1
            continue
        code, length = bootp[i], bootp[i + 1]
        options[code] = bootp[i + 2:i + 2 + length]
        i += 2 + length
    return options
