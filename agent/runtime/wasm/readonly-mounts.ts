// Read-only volumes for node:wasi, which has no read-only preopen: wraps the WASI imports so that paths
// under a read-only preopen cannot be created, truncated, removed, renamed or opened with write rights.
// Files and directories opened beneath one are tracked (their fds lose write rights and stay guarded).

const ERRNO_ROFS = 69
const ERRNO_SUCCESS = 0
const OFLAGS_CREAT = 1
const OFLAGS_TRUNC = 8

// Rights that let an fd (or paths under it) change anything.
const WRITE_RIGHTS = [0, 6, 8, 9, 10, 11, 12, 16, 17, 19, 20, 22, 23, 24, 25, 26].reduce((acc, bit) => acc | (1n << BigInt(bit)), 0n)

type WasiFn = (...args: any[]) => any

/**
 * `readonlyFds` are the preopened fds of read-only mounts (node:wasi numbers preopens from 3 in the order
 * given). `memory` returns the module's memory, to read the fd that path_open wrote.
 */
export function guardReadonlyMounts (imports: Record<string, WasiFn>, readonlyFds: number[], memory: () => WebAssembly.Memory | undefined): Record<string, WasiFn> {
  if (readonlyFds.length === 0) return imports
  const guarded = new Set(readonlyFds)
  const out: Record<string, WasiFn> = { ...imports }
  const deny = (name: string, fdArgs: number[]): void => {
    const orig = imports[name]
    if (!orig) return
    out[name] = (...args: any[]) => fdArgs.some(i => guarded.has(args[i])) ? ERRNO_ROFS : orig(...args)
  }
  deny('path_create_directory', [0])
  deny('path_remove_directory', [0])
  deny('path_unlink_file', [0])
  deny('path_filestat_set_times', [0])
  deny('path_rename', [0, 3])
  deny('path_link', [4])
  deny('path_symlink', [2])
  deny('fd_allocate', [0])
  const pathOpen = imports.path_open
  out.path_open = (fd: number, dirflags: number, path: number, pathLen: number, oflags: number, base: bigint, inheriting: bigint, fdflags: number, openedPtr: number) => {
    if (!guarded.has(fd)) return pathOpen(fd, dirflags, path, pathLen, oflags, base, inheriting, fdflags, openedPtr)
    if ((oflags & (OFLAGS_CREAT | OFLAGS_TRUNC)) !== 0) return ERRNO_ROFS
    const errno = pathOpen(fd, dirflags, path, pathLen, oflags, BigInt(base) & ~WRITE_RIGHTS, BigInt(inheriting) & ~WRITE_RIGHTS, fdflags, openedPtr)
    const mem = memory()
    if (errno === ERRNO_SUCCESS && mem) guarded.add(new DataView(mem.buffer).getUint32(openedPtr, true))
    return errno
  }
  const fdClose = imports.fd_close
  out.fd_close = (fd: number) => {
    const errno = fdClose(fd)
    if (errno === ERRNO_SUCCESS) guarded.delete(fd)
    return errno
  }
  const fdRenumber = imports.fd_renumber
  out.fd_renumber = (from: number, to: number) => {
    const errno = fdRenumber(from, to)
    if (errno === ERRNO_SUCCESS) {
      if (guarded.has(from)) guarded.add(to)
      else guarded.delete(to)
      guarded.delete(from)
    }
    return errno
  }
  return out
}
