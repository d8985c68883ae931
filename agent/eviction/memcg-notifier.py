#!/usr/bin/python3
# The orchlet's memcg threshold helper (cgroup v1): the kernel's memory threshold notification needs an eventfd,
# which Node cannot make without native code, so the orchlet runs this script (Debian's python3, 3.10+ for
# os.eventfd) and reads its stdout. It does what the kubelet's threshold_notifier_linux.go does in Go.
#
#   memcg-notifier.py <memory cgroup directory> <threshold bytes>
#
# Registers an eventfd for memory.usage_in_bytes crossing <threshold bytes> (either way) by writing
# "<eventfd> <usage fd> <threshold>" to the cgroup's cgroup.event_control, then prints one line per event:
#   armed <threshold>   registered (again after each new threshold)
#   crossed             the kernel signalled the eventfd (usage crossed the threshold)
# Each line read on stdin is a new threshold: a new eventfd is registered and the old one closed (which the kernel
# takes as unregistering it). Exits 0 when stdin closes (the orchlet went away); on an error, prints it to stderr and
# exits 2 (no cgroup.event_control: not cgroup v1, no memory controller) or 3 (no os.eventfd).

import os
import select
import sys


def register(cgroup, threshold):
    efd = os.eventfd(0, os.EFD_CLOEXEC)
    ufd = os.open(os.path.join(cgroup, 'memory.usage_in_bytes'), os.O_RDONLY | os.O_CLOEXEC)
    cfd = os.open(os.path.join(cgroup, 'cgroup.event_control'), os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(cfd, ('%d %d %d' % (efd, ufd, threshold)).encode())
    finally:
        os.close(cfd)
    return efd, ufd


def say(line):
    sys.stdout.write(line + '\n')
    sys.stdout.flush()


def main(argv):
    if len(argv) != 3:
        sys.stderr.write('usage: memcg-notifier.py <memory cgroup directory> <threshold bytes>\n')
        return 1
    cgroup, threshold = argv[1], int(argv[2])
    if not hasattr(os, 'eventfd'):
        sys.stderr.write('python %s has no os.eventfd (3.10+ needed)\n' % sys.version.split()[0])
        return 3
    if not os.path.exists(os.path.join(cgroup, 'cgroup.event_control')):
        sys.stderr.write('no cgroup v1 memory controller at %s (no cgroup.event_control)\n' % cgroup)
        return 2
    try:
        efd, ufd = register(cgroup, threshold)
    except OSError as err:
        sys.stderr.write('registering a threshold on %s: %s\n' % (cgroup, err))
        return 2
    say('armed %d' % threshold)
    pending = b''
    while True:
        readable, _, _ = select.select([0, efd], [], [])
        if efd in readable:
            os.eventfd_read(efd)
            say('crossed')
        if 0 in readable:
            chunk = os.read(0, 4096)
            if not chunk:
                return 0
            pending += chunk
            while b'\n' in pending:
                line, pending = pending.split(b'\n', 1)
                if not line.strip():
                    continue
                threshold = int(line)
                try:
                    nefd, nufd = register(cgroup, threshold)
                except OSError as err:
                    sys.stderr.write('registering a threshold on %s: %s\n' % (cgroup, err))
                    return 2
                os.close(efd)
                os.close(ufd)
                efd, ufd = nefd, nufd
                say('armed %d' % threshold)


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv))
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(0)
