#!/usr/bin/env bash
# t_takeover_exact.sh through the route app on the worker path: cli -- dut
# (route p0, p1, path xsk) -- srv, every numbered datagram once across
# three takeovers in a row.
MODE=route ROUNDS=${ROUNDS:-3} exec bash "$(dirname "$0")/t_takeover_exact.sh"
