"""`papergym/VoiceService-v0`: the service tasks through a speech channel (SpeechGym)."""
