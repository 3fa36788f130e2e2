#!/usr/bin/env bash
# t_proxy_exact.sh with the proxies in mode splice (sk_skb).
PX_MODE=splice exec "$(dirname "$0")/t_proxy_exact.sh"
