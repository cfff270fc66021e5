import Hummingbird

/// Requires every request to carry the console's token, as `?token=` or an
/// `Authorization: Bearer` header; anything else gets 401.
struct AccessToken<Context: RequestContext>: RouterMiddleware {
    /// The token the console was started with.
    let secret: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let query = request.uri.queryParameters.get("token")
        let bearer = request.headers[.authorization].flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst("Bearer ".count)) : nil
        }
        guard query.map(secret.constantTimeEquals) == true || bearer.map(secret.constantTimeEquals) == true else {
            throw HTTPError(.unauthorized, message: "This console needs its token: add ?token=TOKEN or an 'Authorization: Bearer TOKEN' header")
        }
        return try await next(request, context)
    }
}

/// Whether `host` names only this machine (127.0.0.0/8, ::1, localhost).
func isLoopback(_ host: String) -> Bool {
    host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
}

extension String {
    /// Compares without stopping at the first differing byte, so the time taken tells nothing
    /// about how much of a guessed token was right.
    func constantTimeEquals(_ other: String) -> Bool {
        let a = Array(utf8), b = Array(other.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
