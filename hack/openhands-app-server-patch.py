"""Two local patches to the installed OpenHands app server (openhands-ai), applied by
hack/openhands-app-server.sh to the copy in its cached virtualenv (never to a copy in this repository),
so that it runs here with process sandboxes. Idempotent: a patched file is recognised and left alone;
a file whose text no longer matches (another release) fails loudly rather than running unpatched.

1. utils/environment.py `is_running_in_docker`: this machine has `/.dockerenv`, so the app server
   believes it runs in Docker and rewrites its sandboxes' `localhost` URLs to `host.docker.internal`,
   which does not resolve here. Patched: only the explicit DOCKER_CONTAINER=true counts.
2. sandbox/process_sandbox_service.py `_get_process_status`: an agent server waiting for requests is
   `sleeping` to psutil, which it maps to STARTING, so every start waits for RUNNING until its
   120 s timeout and fails. Patched: sleeping (and idle, disk-sleep) count as running.
3. The same file, `_wait_for_server_ready`: it gives a new agent server 30 s to answer /alive; its
   imports alone take 20-60 s on two cores shared with other test suites, so starts failed with
   "Agent Server Failed to start properly" now and then. Patched: 180 s.
"""
import importlib.util
import pathlib
import sys

MARK = '# agentyard-local-patch'

PATCHES = [
    (
        'app_server/utils/environment.py',
        '''    """Best-effort detection for Docker containers."""
    docker_env_markers = (''',
        f'''    """Best-effort detection for Docker containers."""
    return os.environ.get('DOCKER_CONTAINER') == 'true'  {MARK}
    docker_env_markers = (''',
    ),
    (
        'app_server/sandbox/process_sandbox_service.py',
        '''                if status == psutil.STATUS_RUNNING:
                    return SandboxStatus.RUNNING''',
        f'''                if status in (psutil.STATUS_RUNNING, psutil.STATUS_SLEEPING, psutil.STATUS_DISK_SLEEP, psutil.STATUS_IDLE):  {MARK}
                    return SandboxStatus.RUNNING''',
    ),
    (
        'app_server/sandbox/process_sandbox_service.py',
        '''    async def _wait_for_server_ready(self, port: int, timeout: int = 30) -> bool:''',
        f'''    async def _wait_for_server_ready(self, port: int, timeout: int = 180) -> bool:  {MARK}''',
    ),
]


def main() -> int:
    spec = importlib.util.find_spec('openhands')
    if spec is None or not spec.submodule_search_locations:
        print('openhands-app-server-patch: the openhands package is not installed', file=sys.stderr)
        return 1
    root = pathlib.Path(list(spec.submodule_search_locations)[0])
    for rel, old, new in PATCHES:
        path = root / rel
        text = path.read_text(encoding='utf-8')
        if new in text:
            continue
        if text.count(old) != 1:
            print(f'openhands-app-server-patch: {path} does not have the expected text (another release?)', file=sys.stderr)
            return 1
        path.write_text(text.replace(old, new), encoding='utf-8')
        # The bytecode cache would keep the old code until the file's mtime is checked; remove it to be sure.
        for pyc in (path.parent / '__pycache__').glob(path.stem + '.*.pyc'):
            pyc.unlink()
    return 0


if __name__ == '__main__':
    sys.exit(main())
