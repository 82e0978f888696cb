"""A phone simulator with AndroidWorld's task families (WM-R1's setting, papers/envs.md §1).

Modules: `views` (elements, screens, layout engine), `phone` (the plain-data state, back stack and
action semantics), `apps` (the 14 apps), `layouts` (default and held-out), `render_text` /
`render_html` / `render_image` (the three renderings), `actions` (WM-R1's action grammar), `oracle`
(screen-reading plans), `world` (seeded contents), `templates` (AndroidWorld templates),
`mobile_gui_env` (`papergym/MobileGUI-v0`), `world_models` (simulator, noisy and model-backed world
models), `learned_wm` (a learned world model's data, diff format and backend) and `world_model_env`
(`papergym/WorldModelGUI-v0`).
"""

from papergym.envs.mobile_gui.actions import ParsedAction, parse_action
from papergym.envs.mobile_gui.phone import Phone, PhoneState
from papergym.envs.mobile_gui.render_html import render_html
from papergym.envs.mobile_gui.render_text import render_text
from papergym.envs.mobile_gui.views import Element, Layout, Screen

__all__ = [
    "Element",
    "Layout",
    "ParsedAction",
    "Phone",
    "PhoneState",
    "Screen",
    "parse_action",
    "render_html",
    "render_text",
]
