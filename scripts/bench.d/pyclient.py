#!/usr/bin/python3
"""A small asyncio load client, the yardstick for capture's CPU cost.

Written for scripts/bench.d/capture-vs-python.sh. Its per-chunk work follows
the chat request function of vLLM's `bench serve` (the facts, not the code):
read the body with iter_any(), strip each piece, append it to a text buffer
split on blank lines into SSE messages (a last message left without its blank
line is taken when it is "[DONE]" or parses as JSON, so it is parsed twice, as
vLLM does), skip comments, drop the "data: " prefix and, unless it is
"[DONE]", take a perf_counter() timestamp and json.loads() the message, then
read choices[0].delta.content or usage.completion_tokens.

Closed loop: --concurrency workers send back to back for --duration seconds.
Open loop: --rate requests per second with exponential gaps from --seed for
--duration seconds; send lag is the time the request is handed to aiohttp
minus its scheduled time.

Prints one JSON line: requests, ok, content chunks, process CPU seconds
(getrusage, user+sys, whole process including start-up), load-phase wall
seconds and the send-lag percentiles in microseconds.
"""
import argparse
import asyncio
import json
import random
import resource
import time

import aiohttp


class Stats:
    def __init__(self):
        self.requests = 0
        self.ok = 0
        self.chunks = 0
        self.lags = []


async def one_request(session, url, payload, stats, scheduled=None):
    sent = time.perf_counter()
    if scheduled is not None:
        stats.lags.append(sent - scheduled)
    stats.requests += 1
    first = 0.0
    last = sent
    itl = []
    text = ""
    out_tokens = None
    try:
        async with session.post(url, json=payload) as resp:
            if resp.status != 200:
                await resp.read()
                return
            buf = ""
            async for piece in resp.content.iter_any():
                piece = piece.strip()
                if not piece:
                    continue
                buf += piece.decode("utf-8")
                messages = []
                while "\n\n" in buf:
                    msg, buf = buf.split("\n\n", 1)
                    msg = msg.strip()
                    if msg:
                        messages.append(msg)
                # strip() removed the blank line ending the piece's last
                # message: take it when it is "[DONE]" or parses as JSON.
                if buf.startswith("data: "):
                    rest = buf.removeprefix("data: ").strip()
                    if rest == "[DONE]":
                        messages.append(buf.strip())
                        buf = ""
                    elif rest:
                        try:
                            json.loads(rest)
                            messages.append(buf.strip())
                            buf = ""
                        except ValueError:
                            pass
                for msg in messages:
                    if msg.startswith(":"):
                        continue
                    data = msg.removeprefix("data: ")
                    if data == "[DONE]":
                        continue
                    now = time.perf_counter()
                    obj = json.loads(data)
                    choices = obj.get("choices")
                    if choices:
                        content = choices[0]["delta"].get("content")
                        if first == 0.0:
                            first = now - sent
                        else:
                            itl.append(now - last)
                        text += content or ""
                        stats.chunks += 1
                    elif obj.get("usage"):
                        out_tokens = obj["usage"].get("completion_tokens")
                    last = now
            if out_tokens is not None or first:
                stats.ok += 1
    except aiohttp.ClientError:
        pass


def payload_for(model, words, tokens):
    return {
        "model": model,
        "messages": [{"role": "user", "content": " ".join(["hello"] * words)}],
        "max_tokens": tokens,
        "min_tokens": tokens,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def closed_loop(session, url, payload, stats, conc, dur):
    end = time.perf_counter() + dur

    async def worker():
        while time.perf_counter() < end:
            await one_request(session, url, payload, stats)

    await asyncio.gather(*(worker() for _ in range(conc)))


async def open_loop(session, url, payload, stats, rate, dur, seed):
    rng = random.Random(seed)
    start = time.perf_counter()
    t = 0.0
    tasks = set()
    while t < dur:
        target = start + t
        d = target - time.perf_counter()
        if d > 0:
            await asyncio.sleep(d)
        task = asyncio.create_task(one_request(session, url, payload, stats, target))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        t += rng.expovariate(rate)
    if tasks:
        await asyncio.gather(*tasks)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--model", default="benchseal-sim")
    ap.add_argument("--concurrency", type=int, default=0)
    ap.add_argument("--rate", type=float, default=0)
    ap.add_argument("--duration", type=float, default=4)
    ap.add_argument("--input-tokens", type=int, default=16)
    ap.add_argument("--output-tokens", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    url = a.url.rstrip("/") + "/v1/chat/completions"
    payload = payload_for(a.model, a.input_tokens, a.output_tokens)
    stats = Stats()
    conn = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None)
    t0 = time.perf_counter()
    async with aiohttp.ClientSession(connector=conn, timeout=timeout) as session:
        if a.rate > 0:
            await open_loop(session, url, payload, stats, a.rate, a.duration, a.seed)
        else:
            await closed_loop(session, url, payload, stats, a.concurrency, a.duration)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    lags = sorted(stats.lags)

    def pct(q):
        if not lags:
            return None
        return lags[max(1, -(-q * len(lags) // 100)) - 1] * 1e6

    print(json.dumps({
        "requests": stats.requests, "ok": stats.ok, "chunks": stats.chunks,
        "cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall,
        "lag_p50_us": pct(50), "lag_p99_us": pct(99),
        "lag_max_us": lags[-1] * 1e6 if lags else None,
    }))


if __name__ == "__main__":
    asyncio.run(main())
