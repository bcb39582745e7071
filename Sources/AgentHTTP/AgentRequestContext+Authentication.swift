import HummingbirdAuth

/// hummingbird-auth's authenticators (``BearerTokens``, ``SessionAuthenticator``) set
/// ``AgentRequestContext/identity``.
extension AgentRequestContext: AuthRequestContext {}
