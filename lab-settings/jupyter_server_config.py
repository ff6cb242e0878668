"""The course's Jupyter server settings.

The README's launch command puts this folder on Jupyter's config path
(`JUPYTER_CONFIG_PATH=lab-settings jupyter lab ...`), where the server finds
this file next to the user's own config; Binder's postBuild adds it to the
image's config, so hubs built from `binder/` have it too.

1. The kernel's messages go to the browser without Nagle's delay.
   jupyter-server sends them over a WebSocket with Nagle's algorithm on, so a
   small write waits until the browser acknowledges the one before. While a
   slider is dragged, messages flow both ways and the browser holds back its
   acknowledgements (at least 40 ms on Linux), so each new picture waited
   about 45 ms in the server. In back-to-back runs of
   benchmarks/slider_latency.py, a picture's trip while dragging fell from
   37-54 ms to 14-24 ms, and the floor (pictures drawn in advance) dragged at
   25 pictures a second instead of 16-18. See the README's performance
   section.
2. Next to overrides.json (in the repository), JupyterLab reads its setting
   overrides from this folder: no news pop-up, widget messages handled by
   the kernel's main thread in the order they come, and no busy indicator in
   the notebook's toolbar.
3. labconfig/page_config.json (found because this folder is on Jupyter's
   config path) switches off the plugin that swaps the browser tab's icon
   when the kernel is busy.

2 and 3 spare the page two redraws at every busy and idle, that is at every
slider move: in back-to-back runs, the panels' p50s fell from 36-46 ms to
27-40 ms (see the README). The status bar still says "Busy" and a running
cell still shows [*].
"""

from pathlib import Path

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection


class NoDelayKernelConnection(ZMQChannelsWebsocketConnection):
    """A kernel's WebSocket that sends each message at once (TCP_NODELAY)."""

    def connect(self):
        self.websocket_handler.set_nodelay(True)
        return super().connect()


c = get_config()  # noqa: F821 (Jupyter runs this file with get_config defined)
c.ServerApp.kernel_websocket_connection_class = NoDelayKernelConnection
here = Path(__file__).resolve().parent
if (here / "overrides.json").is_file():
    c.LabApp.app_settings_dir = str(here)
