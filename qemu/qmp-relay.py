#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Relay a guest's requests for the QEMU monitor: what a physical hand does
# to the machine (pull a card out), asked for by a test inside the guest.
# The guest writes a line "P2PDMA-QMP device_del ID" to its output port
# (RUN_DIR/output.log); this relay, started by qemu/run.sh beside QEMU for
# a topology that says monitor_relay, sends that command through QMP
# (SOCKET) and logs the exchange to RUN_DIR/qmp.log. Only device_del is relayed: a test asks for a hot-unplug,
# nothing else. Ends when QEMU closes the socket.
#
# Usage: qemu/qmp-relay.py RUN_DIR SOCKET
import json
import os
import re
import socket
import sys
import time

run = sys.argv[1]
sock_path = sys.argv[2]
log = open(os.path.join(run, 'qmp.log'), 'a', buffering=1)
request = re.compile(r'^P2PDMA-QMP device_del ([A-Za-z0-9_.-]+)\r?$')

for _ in range(600):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock_path)
        break
    except OSError:
        s.close()
        time.sleep(0.1)
else:
    log.write('qmp-relay: no QMP socket at %s\n' % sock_path)
    sys.exit(1)
qmp = s.makefile('rw', buffering=1)


def reply():
    """The next reply to a command; events are logged and skipped."""
    while True:
        line = qmp.readline()
        if not line:
            raise EOFError
        log.write('< ' + line)
        msg = json.loads(line)
        if 'return' in msg or 'error' in msg:
            return msg


def command(name, **args):
    cmd = {'execute': name}
    if args:
        cmd['arguments'] = args
    log.write('> %s\n' % json.dumps(cmd))
    qmp.write(json.dumps(cmd) + '\n')
    return reply()


try:
    log.write('< ' + qmp.readline())    # the greeting
    command('qmp_capabilities')
    with open(os.path.join(run, 'output.log'), errors='replace') as out:
        while True:
            line = out.readline()
            if not line:
                # QEMU gone: the socket reads EOF (events may be pending).
                time.sleep(0.2)
                try:
                    if s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b'':
                        break
                except BlockingIOError:
                    pass
                continue
            m = request.match(line)
            if m:
                command('device_del', id=m.group(1))
except (EOFError, OSError, ValueError) as e:
    log.write('qmp-relay: %s\n' % e)
