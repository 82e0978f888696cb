"""tau2's initialization actions and assertions on the user's phone (`PhoneSetup`).

Only trusted replays run the initialization functions (tau2 ``initialization_actions``, listed in the
toolkit's ``HIDDEN``); the assertions are tau2's ``env_assertions`` on the phone (``ASSERTIONS``). Neither
is shown to the agent or to the user. Semantics follow tau2-bench's ``user_tools.py`` (papergym's code).
"""

from __future__ import annotations

from papergym.envs.service.telecom.device import DeviceTools


class PhoneSetup(DeviceTools):
    """The phone's tools (`DeviceTools`) plus tau2's initialization and assertion functions on it."""

    DEVICE_HIDDEN: tuple[str, ...] = (
        "set_user_info",
        "set_user_location",
        "turn_airplane_mode_on",
        "turn_data_off",
        "turn_roaming_on",
        "turn_roaming_off",
        "turn_data_saver_mode_on",
        "unseat_sim_card",
        "lock_sim_card",
        "break_apn_settings",
        "break_apn_mms_setting",
        "break_vpn",
        "remove_app_permission",
        "set_wifi_calling",
        "simulate_network_search",
    )
    DEVICE_ASSERTIONS: tuple[str, ...] = (
        "assert_airplane_mode_status",
        "assert_service_status",
        "assert_mobile_data_status",
        "assert_mobile_roaming_status",
        "assert_mobile_data_saver_mode_status",
        "assert_internet_speed",
        "assert_internet_not_excellent",
        "assert_can_send_mms",
        "assert_mobile_data_usage_exceeded",
    )

    # ------------------------------------------------------------------ initialization (tau2's)
    def set_user_info(self, name: str, phone_number: str) -> str:
        """Set the user's name and phone number (the phone keeps its state until a network search)."""
        place = self.db.edit("surroundings", "user")
        self.db.set(place, "name", name)
        self.db.set(place, "phone_number", phone_number)
        return "User info set."

    def set_user_location(self, abroad: bool) -> str:
        """Put the user abroad or at home."""
        self.db.set(self.db.edit("surroundings", "user"), "is_abroad", bool(abroad))
        return "Location set."

    def turn_airplane_mode_on(self) -> str:
        if not self.phone["airplane_mode"]:
            self.toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def _switch(self, field: str, on: bool, text: str) -> str:
        """Set a phone switch, then search the network (tau2's toggles do)."""
        self._set(**{field: on})
        self.simulate_network_search()
        return text

    def turn_data_off(self) -> str:
        return self._switch("data_enabled", False, "Data connection broken.")

    def turn_roaming_on(self) -> str:
        return self._switch("roaming_enabled", True, "Data Roaming is now ON.")

    def turn_roaming_off(self) -> str:
        return self._switch("roaming_enabled", False, "Data Roaming is now OFF.")

    def turn_data_saver_mode_on(self) -> str:
        self._set(data_saver_mode=True)
        return "Data Saver Mode is now ON."

    def unseat_sim_card(self) -> str:
        self._set(sim_card_missing=True)
        self.simulate_network_search()
        return "SIM card un-seated."

    def lock_sim_card(self, mode: str) -> str:
        self._set(sim_card_status="locked_pin" if mode == "pin" else "locked_puk")
        self.simulate_network_search()
        return f"SIM card locked in {mode} mode."

    def break_apn_settings(self) -> str:
        apn = self.db.edit("device", "phone")["active_apn_settings"]
        self.db.set(apn, "apn_name", "broken")
        self.simulate_network_search()
        return "APN settings broken."

    def break_apn_mms_setting(self) -> str:
        apn = self.db.edit("device", "phone")["active_apn_settings"]
        self.db.set(apn, "mmsc_url", None)
        return "APN MMS setting broken."

    def break_vpn(self) -> str:
        """Connect the VPN (if it is not) and make its server slow, as tau2 does (the setting stays off)."""
        self.connect_vpn()
        self.db.set(self.db.edit("device", "phone")["vpn_details"], "server_performance", "poor")
        return "VPN connection broken."

    def remove_app_permission(self, app_name: str, permission: str) -> str:
        perms = self.db.edit("device", "phone")["app_statuses"][app_name]["permissions"]
        self.db.set(perms, permission, False)
        return f"Permission '{permission}' removed from app '{app_name}'."

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        self._set(wifi_calling_enabled=bool(enabled))
        if mms_over_wifi is not None:
            self._set(wifi_calling_mms_over_wifi=bool(mms_over_wifi))
        return "Wi-Fi Calling set."

    # ------------------------------------------------------------------ assertions (tau2's)
    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        return bool(self.phone["airplane_mode"]) == expected_status

    def assert_service_status(self, expected_status: str) -> bool:
        return self.phone["network_connection_status"] == expected_status

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        return self._data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        return bool(self.phone["roaming_enabled"]) == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        return bool(self.phone["data_saver_mode"]) == expected_status

    def assert_internet_speed(self, expected_speed: float, expected_desc: str | None = None) -> bool:
        speed, desc = self._speed()
        ok = (speed or 0.0) >= expected_speed
        return ok if expected_desc is None else ok and desc.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        return self._speed()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        return self._mms_ok() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        return self._data_exceeded() == expected_status
