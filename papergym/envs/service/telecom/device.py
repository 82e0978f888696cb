"""The user's own phone in the telecom domain: its state and the tools only the user simulator operates.

State (tau2's ``user_db.toml``): table ``device`` key ``phone`` (SIM, airplane mode, signal, network
technology and mode preference, mobile data, roaming, APN, Wi-Fi, Wi-Fi calling, data saver, VPN, app
permissions, battery) and table ``surroundings`` key ``user`` (the user's name and phone number,
whether they are abroad, the signal per network technology). Like tau2's ``sync_tools``, the phone reads
the carrier side live from the agent's tables: the line's status (no service unless Active, applied at
the next network search), its roaming flag (data abroad), its data usage against the plan's limit plus
refuels, and a bill awaiting payment (a payment request the user can pay).

Semantics follow tau2-bench's ``user_tools.py`` (papergym's own code): a network search connects an
active SIM on an active line with a working APN to the technology the mode preference allows; the
speed test gives (min + max) / 2 of the technology's range times the signal factor, times 0.1 over a
poor VPN and 0.2 with data saver; MMS needs working data, more than 2G, no MMS over Wi-Fi calling, an
MMSC URL, and the messaging app's SMS and storage permissions.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from papergym.envs.service.db import ServiceDB

DEFAULT_APN: dict[str, Any] = {
    "apn_name": "internet",
    "reset_at_reboot": False,
    "mms_apn": "mms",
    "mmsc_url": "http://mms.carrier.com/mms/wapenc",
    "mms_proxy": None,
    "mms_port": None,
}
DEFAULT_DEVICE: dict[str, Any] = {
    "sim_card_status": "active",
    "sim_card_missing": False,
    "airplane_mode": False,
    "network_signal_strength": "good",
    "network_technology_connected": "5G",
    "network_connection_status": "connected",
    "battery_level": 80,
    "data_enabled": True,
    "roaming_enabled": False,
    "network_mode_preference": "4g_5g_preferred",
    "active_apn_settings": DEFAULT_APN,
    "wifi_enabled": False,
    "wifi_connected": False,
    "wifi_ssid": None,
    "wifi_signal_strength": "none",
    "wifi_calling_enabled": False,
    "wifi_calling_mms_over_wifi": False,
    "data_saver_mode": False,
    "vpn_enabled_setting": False,
    "vpn_connected": False,
    "vpn_details": None,
    "app_statuses": {
        "messaging": {
            "app_name": "messaging",
            "permissions": {"sms": True, "storage": True, "phone": True, "network": False},
        },
        "browser": {
            "app_name": "browser",
            "permissions": {"sms": False, "storage": True, "phone": False, "network": True},
        },
    },
}
"""tau2's default phone (``user_db.toml``)."""
DEFAULT_VPN: dict[str, Any] = {
    "server_address": "192.168.1.1",
    "protocol": "OpenVPN",
    "server_performance": "excellent",
}
"""The VPN a ``connect_vpn`` connects to (tau2's default VPN details)."""


class _Enum(str):
    """A value shown as tau2 shows an enum member inside a dict (its Python repr)."""

    def __new__(cls, enum: str, value: str) -> _Enum:
        new = super().__new__(cls, value)
        new.enum = enum
        return new

    def __repr__(self) -> str:
        return f"<{self.enum}.{str(self).upper()}: {str.__repr__(self)}>"


class APNSettings(TypedDict, total=False):
    """The fields ``set_apn_settings`` takes (tau2's ``APNSettings``; one left out takes its default)."""

    apn_name: Literal["internet", "broken"]
    reset_at_reboot: bool
    mms_apn: str | None
    mmsc_url: str | None
    mms_proxy: str | None
    mms_port: int | None


DEFAULT_SURROUNDINGS: dict[str, Any] = {
    "name": None,
    "phone_number": None,
    "is_abroad": False,
    "signal_strength": {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"},
}
MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
_SPEED = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
_SIGNAL = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
_BARS = {
    "none": "📵 No Signal",
    "poor": "📶¹ Poor",
    "fair": "📶² Fair",
    "good": "📶³ Good",
    "excellent": "📶⁴ Excellent",
}
"""The status bar's signal icon per strength (tau2's status bar)."""
_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
"""The sentence tau2's speed test adds to each speed band."""


def user_tables(device: dict[str, Any] | None = None, surroundings: dict[str, Any] | None = None) -> dict:
    """The user-side tables of a telecom database (defaults updated with the given fields)."""
    phone = {**DEFAULT_DEVICE, **(device or {})}
    phone["active_apn_settings"] = {**DEFAULT_APN, **phone["active_apn_settings"]}
    return {
        "device": {"phone": phone},
        "surroundings": {"user": {**DEFAULT_SURROUNDINGS, **(surroundings or {})}},
    }


class DeviceTools:
    """The phone's tools (mixed into `TelecomTools`; listed in ``USER``, never shown to the agent)."""

    db: ServiceDB
    USER: tuple[str, ...] = (
        "check_status_bar",
        "check_network_status",
        "check_network_mode_preference",
        "set_network_mode_preference",
        "run_speed_test",
        "toggle_airplane_mode",
        "check_sim_status",
        "reseat_sim_card",
        "toggle_data",
        "toggle_roaming",
        "check_data_restriction_status",
        "toggle_data_saver_mode",
        "check_apn_settings",
        "set_apn_settings",
        "reset_apn_settings",
        "check_wifi_status",
        "toggle_wifi",
        "check_wifi_calling_status",
        "toggle_wifi_calling",
        "check_vpn_status",
        "connect_vpn",
        "disconnect_vpn",
        "check_installed_apps",
        "check_app_status",
        "check_app_permissions",
        "grant_app_permission",
        "can_send_mms",
        "reboot_device",
        "check_payment_request",
        "make_payment",
    )

    # ------------------------------------------------------------------ state
    @property
    def phone(self) -> dict[str, Any]:
        return self.db.get("device", "phone")

    @property
    def place(self) -> dict[str, Any]:
        return self.db.get("surroundings", "user")

    def _set(self, **fields: Any) -> None:
        phone = self.db.edit("device", "phone")
        for key, value in fields.items():
            self.db.set(phone, key, value)

    def _own_line(self) -> dict[str, Any] | None:
        number = self.place["phone_number"]
        return None if number is None else self.line_by_phone(number)  # type: ignore[attr-defined]

    def _line_active(self) -> bool:
        line = self._own_line()
        return line is None or line["status"] == "Active"

    def _roaming_allowed(self) -> bool:
        line = self._own_line()
        return line is None or bool(line["roaming_enabled"])

    def _data_exceeded(self) -> bool:
        line = self._own_line()
        if line is None:
            return False
        plan = self.db.get("plans", line["plan_id"]) or {"data_limit_gb": 0.0}
        return line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]

    def _payment_request(self) -> dict[str, Any] | None:
        line = self._own_line()
        if line is None:
            return None
        for customer in self.db.values("customers"):
            if line["line_id"] in customer["line_ids"]:
                for bill_id in customer["bill_ids"]:
                    bill = self.db.get("bills", bill_id)
                    if bill is not None and bill["status"] == "Awaiting Payment":
                        return bill
        return None

    def _sim(self) -> str:
        return "missing" if self.phone["sim_card_missing"] else self.phone["sim_card_status"]

    def simulate_network_search(self) -> str:
        """Re-run the phone's network search (after airplane mode, SIM, mode, APN or reboot changes)."""
        phone, signal = self.phone, self.place["signal_strength"]
        tech, status = "none", "no_service"
        if self._sim() == "active":
            pref = phone["network_mode_preference"]
            if pref == "4g_5g_preferred":
                tech = "4G" if signal.get("5G", "none") == "none" else "5G"
            else:
                tech = {"4g_only": "4G", "3g_only": "3G", "2g_only": "2G"}.get(pref, "4G")
            status = "connected"
        broken = phone["active_apn_settings"]["apn_name"] == "broken"
        if phone["airplane_mode"] or broken or not self._line_active() or status != "connected":
            tech, status = "none", "no_service"
        self._set(
            network_connection_status=status,
            network_technology_connected=tech,
            network_signal_strength="none" if tech == "none" else signal.get(tech, "none"),
        )
        return f"Network search done: {status}"

    def _data_working(self) -> bool:
        phone = self.phone
        if phone["airplane_mode"] or phone["network_signal_strength"] == "none":
            return False
        if phone["network_connection_status"] == "no_service":
            return False
        if self.place["is_abroad"] and not (phone["roaming_enabled"] and self._roaming_allowed()):
            return False
        return bool(phone["data_enabled"]) and not self._data_exceeded()

    def _speed(self) -> tuple[float | None, str]:
        if not self._data_working():
            return None, "No Connection"
        phone = self.phone
        factor = 1.0
        vpn = phone.get("vpn_details") or {}
        if phone["vpn_connected"] and vpn.get("server_performance") == "poor":
            factor = 0.1
        if phone["data_saver_mode"]:
            factor *= 0.2
        low, high = _SPEED.get(phone["network_technology_connected"], (0.0, 0.0))
        speed = round((low + high) / 2.0 * _SIGNAL.get(phone["network_signal_strength"], 0.0) * factor, 2)
        bands = ((1, "Very Poor"), (5, "Poor"), (25, "Fair"), (100, "Good"))
        return speed, next((d for limit, d in bands if speed < limit), "Excellent")

    def _mms_ok(self) -> bool:
        phone = self.phone
        if not self._data_working() or phone["network_technology_connected"] == "2G":
            return False
        if phone["wifi_calling_enabled"] and phone["wifi_calling_mms_over_wifi"]:
            return False
        if phone["active_apn_settings"].get("mmsc_url") is None:
            return False
        app = phone["app_statuses"].get("messaging")
        return app is not None and app["permissions"]["sms"] and app["permissions"]["storage"]

    def _status_bar(self) -> str:
        phone = self.phone
        parts = []
        if phone["airplane_mode"]:
            parts.append("✈️ Airplane Mode")
        else:
            parts.append(_BARS.get(phone["network_signal_strength"], "📵 No Signal"))
            tech = phone["network_technology_connected"]
            if tech != "none":
                parts.append(tech)
            if phone["data_enabled"] and tech != "none":
                parts += ["📱 Data Enabled", *(["🔽 Data Saver"] if phone["data_saver_mode"] else [])]
            else:
                parts.append("📵 Data Disabled")
        if phone["wifi_enabled"] and phone["wifi_connected"]:
            parts.append(f"📡 Connected to {phone['wifi_ssid']}" if phone["wifi_ssid"] else "📡 Enabled")
        if phone["vpn_connected"]:
            parts.append("🔒 VPN Connected")
        parts.append(f"🔋 {phone['battery_level']}%")
        return "Status Bar: " + " | ".join(parts)

    def _after(self, text: str) -> str:
        return f"{text}\n{self._status_bar()}"

    # ------------------------------------------------------------------ user tools: reads
    def check_status_bar(self) -> str:
        """Shows the icons of the phone's status bar: signal, network type, mobile data, Wi-Fi, battery."""
        return self._status_bar()

    def check_network_status(self) -> str:
        """Shows airplane mode, SIM status, cellular connection, signal, network type, data and roaming."""
        p = self.phone

        def yes(flag: Any) -> str:
            return "Yes" if flag else "No"

        return "\n".join(
            [
                f"Airplane Mode: {'ON' if p['airplane_mode'] else 'OFF'}",
                f"SIM Card Status: {self._sim()}",
                f"Cellular Connection: {p['network_connection_status']}",
                f"Cellular Signal: {p['network_signal_strength']}",
                f"Cellular Network Type: {p['network_technology_connected']}",
                f"Mobile Data Enabled: {yes(p['data_enabled'])}",
                f"Data Roaming Enabled: {yes(p['roaming_enabled'])}",
                f"Wi-Fi Radio: {'ON' if p['wifi_enabled'] else 'OFF'}",
                f"Wi-Fi Connected: {yes(p['wifi_connected'])}",
                *([f"Connected Wi-Fi Network: {p['wifi_ssid']}"] if p["wifi_connected"] else []),
            ]
        )

    def check_network_mode_preference(self) -> str:
        """Shows the phone's preferred network mode."""
        return f"Network Mode Preference: {self.phone['network_mode_preference']}"

    def run_speed_test(self) -> str:
        """Measures the phone's mobile internet download speed."""
        speed, desc = self._speed()
        if speed is None:
            return f"Speed test failed: {desc}."
        return f"Speed Test Result: {speed:.2f} Mbps ({desc}). {_ADVICE[desc]}"

    def check_sim_status(self) -> str:
        """Shows whether the SIM card is active, missing, or locked by PIN or PUK."""
        return {
            "active": "Your SIM card is active and working.",
            "missing": "No SIM card detected in the phone.",
            "locked_pin": "The SIM card is locked with a PIN code.",
            "locked_puk": "The SIM card is locked with a PUK code.",
        }[self._sim()]

    def check_data_restriction_status(self) -> str:
        """Shows whether Data Saver mode is on."""
        return (
            "Data Saver mode is ON (limits data usage)."
            if self.phone["data_saver_mode"]
            else "Data Saver mode is OFF."
        )

    def check_apn_settings(self) -> str:
        """Shows the APN name and the MMSC URL."""
        apn = self.phone["active_apn_settings"]
        return (
            f"Current APN Name: {apn['apn_name'] or 'Not Set'}\n"
            f"MMSC URL (for picture messages): {apn.get('mmsc_url') or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)"
        )

    def check_wifi_status(self) -> str:
        """Shows whether Wi-Fi is on and connected."""
        p = self.phone
        if not p["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if p["wifi_connected"]:
            signal = p["wifi_signal_strength"]
            return f"Wi-Fi is ON and connected to '{p['wifi_ssid']}'. Signal strength: {signal}."
        return "Wi-Fi is ON but not connected to any network."

    def check_wifi_calling_status(self) -> str:
        """Shows whether Wi-Fi Calling is on."""
        return f"Wi-Fi Calling is currently turned {'ON' if self.phone['wifi_calling_enabled'] else 'OFF'}."

    def check_vpn_status(self) -> str:
        """Shows whether a VPN is connected."""
        p = self.phone
        if p["vpn_connected"]:
            details = p.get("vpn_details")
            if not details:
                return "VPN is ON and connected (no specific details available)."
            shown = {
                **details,
                "server_performance": _Enum("PerformanceLevel", details["server_performance"]),
            }
            return f"VPN is ON and connected. Details: {shown}"
        if p["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    def _granted(self, app_name: str) -> list[str] | None:
        app = self.phone["app_statuses"].get(app_name)
        return None if app is None else [k for k, v in app["permissions"].items() if v]

    def check_app_permissions(self, app_name: str) -> str:
        """Shows the permissions granted to an app.

        Args:
            app_name: The app, e.g. 'messaging' or 'browser'.
        """
        granted = self._granted(app_name)
        if granted is None:
            return f"App '{app_name}' not found on this phone."
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    def check_installed_apps(self) -> str:
        """Lists the names of the apps installed on the phone."""
        return f"The following apps are installed on the phone: {', '.join(self.phone['app_statuses'])}"

    def check_app_status(self, app_name: str) -> str:
        """Shows the details of one app: the permissions it has been granted.

        Args:
            app_name: The app, e.g. 'messaging' or 'browser'.
        """
        granted = self._granted(app_name)
        if granted is None:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        if granted:
            lines += [" - Permissions Granted:", *(f"   - {k}" for k in granted)]
        else:
            lines.append(" - Permissions: None granted.")
        return "\n".join(lines)

    def can_send_mms(self) -> str:
        """Checks whether the messaging app can send MMS (picture) messages."""
        can = self._mms_ok()
        return f"Your messaging app {'can' if can else 'cannot'} send MMS messages."

    def check_payment_request(self) -> str:
        """Shows whether the agent has sent a payment request."""
        bill = self._payment_request()
        if bill is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {bill['bill_id']} of {bill['total_due']} USD."

    # ------------------------------------------------------------------ user tools: writes
    def set_network_mode_preference(self, mode: str) -> str:
        """Sets the preferred network mode: '4g_5g_preferred', '4g_only', '3g_only' or '2g_only'.

        Args:
            mode: The network mode.
        """
        if mode not in MODES:
            text = f"Failed to set network mode: '{mode}' is not a valid option. Please use one of: "
            return self._after(text + ", ".join(MODES))
        self._set(network_mode_preference=mode)
        self.simulate_network_search()
        return self._after(f"Preferred Network Mode set to: {mode}")

    def toggle_airplane_mode(self) -> str:
        """Turns Airplane Mode ON or OFF."""
        on = not self.phone["airplane_mode"]
        self._set(airplane_mode=on, wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        if on and self.phone["vpn_connected"]:
            self._set(vpn_connected=False, vpn_details=None)
        self.simulate_network_search()
        return self._after(f"Airplane Mode is now {'ON' if on else 'OFF'}.")

    def reseat_sim_card(self) -> str:
        """Removes and re-inserts the SIM card."""
        self._set(sim_card_missing=False)
        self.simulate_network_search()
        return self._after("SIM card re-seated successfully.")

    def toggle_data(self) -> str:
        """Turns mobile data ON or OFF."""
        on = not self.phone["data_enabled"]
        self._set(data_enabled=on)
        self.simulate_network_search()
        return self._after(f"Mobile Data is now {'ON' if on else 'OFF'}.")

    def toggle_roaming(self) -> str:
        """Turns data roaming ON or OFF on the phone."""
        on = not self.phone["roaming_enabled"]
        self._set(roaming_enabled=on)
        self.simulate_network_search()
        return self._after(f"Data Roaming is now {'ON' if on else 'OFF'}.")

    def toggle_data_saver_mode(self) -> str:
        """Turns Data Saver mode ON or OFF."""
        on = not self.phone["data_saver_mode"]
        self._set(data_saver_mode=on)
        return self._after(f"Data Saver Mode is now {'ON' if on else 'OFF'}.")

    def set_apn_settings(self, apn_settings: APNSettings) -> str:
        """Replaces the phone's APN settings (fields left out take the carrier default), then searches
        for the network again.

        Args:
            apn_settings: The new settings: apn_name ('internet'), mms_apn, mmsc_url, mms_proxy, mms_port.
        """
        self._set(active_apn_settings={**DEFAULT_APN, **apn_settings})
        self.simulate_network_search()
        return self._after(f"APN settings set to: {self.phone['active_apn_settings']['apn_name']}")

    def reset_apn_settings(self) -> str:
        """Resets the APN settings to the carrier defaults at the next reboot."""
        apn = self.db.edit("device", "phone")["active_apn_settings"]
        self.db.set(apn, "reset_at_reboot", True)
        self.simulate_network_search()
        return self._after("APN settings will reset at reboot.")

    def toggle_wifi(self) -> str:
        """Turns Wi-Fi ON or OFF (not while Airplane Mode is ON)."""
        if self.phone["airplane_mode"]:
            return self._after("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        on = not self.phone["wifi_enabled"]
        self._set(wifi_enabled=on)
        if not on:
            self._set(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        return self._after(f"Wi-Fi is now {'ON' if on else 'OFF'}.")

    def toggle_wifi_calling(self) -> str:
        """Turns Wi-Fi Calling ON or OFF."""
        on = not self.phone["wifi_calling_enabled"]
        self._set(wifi_calling_enabled=on)
        return self._after(f"Wi-Fi Calling is now {'ON' if on else 'OFF'}.")

    def connect_vpn(self) -> str:
        """Connects the phone's VPN (Virtual Private Network)."""
        if self.phone["vpn_connected"]:
            return "VPN already connected."
        self._set(vpn_connected=True, vpn_details=dict(DEFAULT_VPN))
        return self._after("VPN connected successfully.")

    def disconnect_vpn(self) -> str:
        """Disconnects the VPN."""
        if not self.phone["vpn_connected"]:
            return self._after("No active VPN connection to disconnect.")
        self._set(vpn_connected=False, vpn_details=None)
        return self._after("VPN disconnected successfully.")

    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Grants a permission ('sms', 'storage', 'phone' or 'network') to an app.

        Args:
            app_name: The app, e.g. 'messaging'.
            permission: The permission to grant.
        """
        app = self.phone["app_statuses"].get(app_name)
        permission = permission.lower()
        if app is None:
            return self._after(f"Error. App '{app_name}' not found. Cannot grant permission.")
        if permission not in app["permissions"]:
            known = list(app["permissions"])
            text = (
                f"Permission '{permission}' not tracked for app '{app_name}', available permissions: {known}"
            )
            return self._after(f"Error. {text}")
        perms = self.db.edit("device", "phone")["app_statuses"][app_name]["permissions"]
        self.db.set(perms, permission, True)
        return self._after(f"Success. Permission '{permission}' granted to app '{app_name}'.")

    def reboot_device(self) -> str:
        """Restarts the phone (applies a pending APN reset and searches for the network again)."""
        lines = []
        if self.phone["active_apn_settings"].get("reset_at_reboot"):
            self._set(active_apn_settings=dict(DEFAULT_APN))
            lines.append("Resetting APN settings...")
        lines.append("Restarting network services...")
        self.simulate_network_search()
        return self._after("\n".join(lines))

    def make_payment(self) -> str:
        """Pays the bill of the agent's payment request."""
        bill = self._payment_request()
        if bill is None:
            return "You do not have a payment request."
        self.db.set(self.db.edit("bills", bill["bill_id"]), "status", "Paid")
        return f"Payment of {bill['total_due']} USD has been made for bill {bill['bill_id']}."
