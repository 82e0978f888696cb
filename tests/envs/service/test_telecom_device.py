"""The telecom phone's tools: tau2's 30 user-device tools, with tau2's semantics and messages."""

from __future__ import annotations

from typing import Any

import pytest

from papergym.envs.service.db import ServiceDB
from papergym.envs.service.telecom import TelecomTools
from papergym.envs.service.telecom.device import user_tables
from papergym.envs.service.telecom.user import device_requests

_TAU2_NAMES = """
    can_send_mms check_apn_settings check_app_permissions check_app_status check_data_restriction_status
    check_installed_apps check_network_mode_preference check_network_status check_payment_request
    check_sim_status check_status_bar check_vpn_status check_wifi_calling_status check_wifi_status
    connect_vpn disconnect_vpn grant_app_permission make_payment reboot_device reseat_sim_card
    reset_apn_settings run_speed_test set_apn_settings set_network_mode_preference toggle_airplane_mode
    toggle_data toggle_data_saver_mode toggle_roaming toggle_wifi toggle_wifi_calling
"""
TAU2_USER_TOOLS = set(_TAU2_NAMES.split())
"""The tools of tau2-bench's telecom ``TelecomUserTools`` (src/tau2/domains/telecom/user_tools.py)."""


@pytest.fixture
def phone() -> TelecomTools:
    return TelecomTools(ServiceDB(user_tables()))


def _call(phone: TelecomTools, name: str, **arguments: Any) -> str:
    result = phone.call_user(name, arguments)
    assert not result.error, result.text
    return result.text


def test_the_phone_has_tau2s_30_user_tools() -> None:
    assert set(TelecomTools.USER) == TAU2_USER_TOOLS and len(TelecomTools.USER) == 30
    assert set(TelecomTools.user_tools()) == TAU2_USER_TOOLS
    assert not TAU2_USER_TOOLS & set(TelecomTools.tools())  # never shown to the agent


def test_connect_vpn_connects_the_default_vpn_once(phone: TelecomTools) -> None:
    speed = _call(phone, "run_speed_test")
    text = _call(phone, "connect_vpn")
    assert text.startswith("VPN connected successfully.\nStatus Bar: ") and "VPN Connected" in text
    assert phone.phone["vpn_details"]["server_performance"] == "excellent"
    assert phone.phone["vpn_enabled_setting"] is False  # tau2 connects without touching the setting
    assert _call(phone, "run_speed_test") == speed  # an excellent server does not slow the line
    assert _call(phone, "connect_vpn") == "VPN already connected."


def test_a_broken_vpn_is_slow_until_disconnected_and_then_off(phone: TelecomTools) -> None:
    fast = _call(phone, "run_speed_test")
    phone.break_vpn()
    assert "'server_performance': <PerformanceLevel.POOR: 'poor'>}" in _call(phone, "check_vpn_status")
    assert _call(phone, "run_speed_test") != fast
    assert _call(phone, "disconnect_vpn").startswith("VPN disconnected successfully.\nStatus Bar: ")
    assert _call(phone, "check_vpn_status") == "VPN is turned OFF."
    assert _call(phone, "run_speed_test") == fast
    assert _call(phone, "disconnect_vpn").startswith("No active VPN connection to disconnect.\nStatus Bar: ")


def test_set_apn_settings_replaces_the_apn_and_searches_the_network(phone: TelecomTools) -> None:
    text = _call(phone, "set_apn_settings", apn_settings={"apn_name": "broken"})
    assert text.startswith("APN settings set to: broken\nStatus Bar: ")
    assert phone.phone["network_connection_status"] == "no_service"
    _call(phone, "set_apn_settings", apn_settings={"apn_name": "internet", "mmsc_url": None})
    assert phone.phone["network_connection_status"] == "connected"
    assert phone.phone["active_apn_settings"]["mmsc_url"] is None and "cannot" in _call(phone, "can_send_mms")
    _call(phone, "set_apn_settings", apn_settings={})  # every field left out: the carrier defaults
    assert "can send" in _call(phone, "can_send_mms")
    for bad in ({"apn_name": "fast"}, {"apn_name": "internet", "speed": "max"}):
        result = phone.call_user("set_apn_settings", {"apn_settings": bad})
        assert result.error and result.invalid
    assert phone.phone["active_apn_settings"]["apn_name"] == "internet"


def test_installed_apps_and_app_status(phone: TelecomTools) -> None:
    assert _call(phone, "check_installed_apps") == (
        "The following apps are installed on the phone: messaging, browser"
    )
    assert _call(phone, "check_app_status", app_name="messaging") == (
        "Status for App: messaging\n - Permissions Granted:\n   - sms\n   - storage\n   - phone"
    )
    for permission in ("storage", "network"):
        phone.remove_app_permission("browser", permission)
    assert _call(phone, "check_app_status", app_name="browser") == (
        "Status for App: browser\n - Permissions: None granted."
    )
    assert _call(phone, "check_app_permissions", app_name="browser") == (
        "App 'browser' currently has no permissions granted."
    )
    assert _call(phone, "check_app_status", app_name="camera") == "App 'camera' not found on this phone."


def test_the_scripted_user_reads_the_new_requests() -> None:
    names = TelecomTools.USER
    assert device_requests("Please disconnect your VPN, then connect your VPN again.", names) == [
        ("disconnect_vpn", {}),
        ("connect_vpn", {}),
    ]
    assert device_requests("Please check the messaging app status and check your installed apps.", names) == [
        ("check_app_status", {"app_name": "messaging"}),
        ("check_installed_apps", {}),
    ]
    assert device_requests('Please run set_apn_settings(apn_settings={"apn_name": "internet"}).', names) == [
        ("set_apn_settings", {"apn_settings": {"apn_name": "internet"}})
    ]
