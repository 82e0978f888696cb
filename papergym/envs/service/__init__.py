"""The service-agent env (tau2-bench's domains): `papergym.envs.service.service_env.ServiceAgentEnv`."""
