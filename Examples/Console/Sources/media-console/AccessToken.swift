import Foundation
import Hummingbird

/// Requires every request to carry the console's token, as `?token=`, an
/// `Authorization: Bearer` header or the cookie a request with `?token=` was answered with;
/// anything else gets 401.
///
/// The cookie is what lets a browser opened on `/?token=TOKEN` load the page's own files
/// (`assets/app.js`, `assets/style.css`), which the page names without the token: the answer to
/// a request whose `?token=` is right sets it (`HttpOnly`, `SameSite=Strict`: no script reads it
/// and no other site's page sends it).
struct AccessToken<Context: RequestContext>: RouterMiddleware {
    /// The token the console was started with.
    let secret: String

    /// The cookie's name.
    static var cookieName: String { "media-console-token" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let query = request.uri.queryParameters.get("token").map { String($0) }
        let bearer = request.headers[.authorization].flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst("Bearer ".count)) : nil
        }
        let cookie = request.headers[values: .cookie].lazy.flatMap { $0.split(separator: ";") }.compactMap { pair -> String? in
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.count == 2 && parts[0] == Self.cookieName ? parts[1] : nil
        }.first
        let queryIsRight = query.map(secret.constantTimeEquals) == true
        guard queryIsRight || bearer.map(secret.constantTimeEquals) == true || cookie.map(secret.constantTimeEquals) == true else {
            throw HTTPError(.unauthorized, message: "This console needs its token: add ?token=TOKEN or an 'Authorization: Bearer TOKEN' header")
        }
        var response = try await next(request, context)
        if queryIsRight && cookie.map(secret.constantTimeEquals) != true {
            response.headers[.setCookie] = "\(Self.cookieName)=\(secret); Path=/; HttpOnly; SameSite=Strict"
        }
        return response
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
