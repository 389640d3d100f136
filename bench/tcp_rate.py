"""TCP throughput between two network namespaces (bench/netns_cluster.sh check): a server in one
namespace, a client in another that streams for --seconds, both started with `ip netns exec`;
prints the achieved rate beside the configured one. One stream and --streams parallel ones.

    python3 tcp_rate.py --server-netns wfcl-h1 --client-netns wfcl-h0 --addr 10.213.0.2 \
                        [--configured 10gbit] [--seconds 2] [--streams 2]
"""
import argparse
import socket
import subprocess
import sys
import threading
import time

PORT = 52013
BLOCK = 1 << 20


def serve(addr, streams):
    """Accepts `streams` connections, drains them, prints the bytes received and the seconds."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, PORT))
    srv.listen(streams)
    print("ready", flush=True)
    totals = [0] * streams
    first, last = [None], [0.0]

    def drain(conn, k):
        buf = bytearray(BLOCK)
        while True:
            n = conn.recv_into(buf)
            if n == 0:
                break
            now = time.monotonic()
            if first[0] is None:
                first[0] = now
            last[0] = max(last[0], now)
            totals[k] += n

    threads = []
    for k in range(streams):
        conn, _ = srv.accept()
        th = threading.Thread(target=drain, args=(conn, k))
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    print(f"received {sum(totals)} {last[0] - (first[0] or last[0]):.6f}", flush=True)


def send(addr, seconds, streams):
    payload = bytes(BLOCK)

    def one():
        s = socket.create_connection((addr, PORT), timeout=10)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            s.sendall(payload)
        s.close()

    threads = [threading.Thread(target=one) for _ in range(streams)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def rate_bits(text):
    t = text.lower()
    for suffix, scale in (("gbit", 1e9), ("mbit", 1e6)):
        if t.endswith(suffix):
            return float(t[: -len(suffix)]) * scale
    raise ValueError(f"rate '{text}' is not like 10gbit")


def measure(args, streams):
    me = [sys.executable, __file__]
    server = subprocess.Popen(["ip", "netns", "exec", args.server_netns] + me +
                              ["--serve", "--addr", args.addr, "--streams", str(streams)],
                              stdout=subprocess.PIPE, text=True)
    try:
        if server.stdout.readline().strip() != "ready":
            raise RuntimeError("the server did not start")
        subprocess.run(["ip", "netns", "exec", args.client_netns] + me +
                       ["--send", "--addr", args.addr, "--seconds", str(args.seconds), "--streams", str(streams)],
                       check=True, timeout=args.seconds + 20)
        line = server.stdout.readline().split()
        server.wait(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
    return int(line[1]) * 8 / float(line[2])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--addr", required=True)
    p.add_argument("--server-netns")
    p.add_argument("--client-netns")
    p.add_argument("--configured", default="")
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--streams", type=int, default=2)
    p.add_argument("--serve", action="store_true")
    p.add_argument("--send", action="store_true")
    args = p.parse_args()
    if args.serve:
        serve(args.addr, args.streams)
        return
    if args.send:
        send(args.addr, args.seconds, args.streams)
        return
    configured = rate_bits(args.configured) if args.configured else 0
    for streams in sorted({1, args.streams}):
        bits = measure(args, streams)
        share = f" = {bits / configured:.0%} of {args.configured}" if configured else ""
        print(f"tcp {args.client_netns} -> {args.server_netns} ({args.addr}), {streams} stream(s): "
              f"{bits / 1e9:.2f} Gbit/s{share}", flush=True)


if __name__ == "__main__":
    main()
