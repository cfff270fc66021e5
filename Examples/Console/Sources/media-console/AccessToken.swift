import Foundation
import Hummingbird
import Synchronization

/// Requires every request to carry the console's token, as `?token=`, an
/// `Authorization: Bearer` header or the cookie a request with `?token=` was answered with;
/// anything else gets 401.
///
/// The cookie is what lets a browser opened on `/?token=TOKEN` load the page's own files
/// (`assets/app.js`, `assets/style.css`), which the page names without the token: the answer to
/// a request whose `?token=` is right sets it (`HttpOnly`, `SameSite=Strict`: no script reads it
/// and no other site's page sends it). Cookies are shared by every port of a host, so its name
/// carries the console's port (`media-console-token-8080`: two consoles, or another program on
/// the same host, do not overwrite or read each other's), and its value is the token
/// percent-encoded (any byte but `A-Z a-z 0-9 - . _ ~` as `%XX`).
///
/// The cookie alone does not change anything: a request that changes state (any method but
/// GET, HEAD, OPTIONS) authenticated only by the cookie must also carry an `Origin` that is this
/// server (a browser's own page always sends it; `RequestGuard` refuses a foreign one).
struct AccessToken<Context: RequestContext>: RouterMiddleware {
    /// The token the console was started with.
    let secret: String
    /// The port the console listens on (known once it is bound: `--port 0`).
    let port: BoundPort

    init(secret: String, port: Int) {
        self.secret = secret
        self.port = BoundPort(port)
    }

    /// The port, set again once the server is bound.
    final class BoundPort: Sendable {
        let value: Atomic<Int>
        init(_ port: Int) { value = Atomic(port) }
    }

    /// The cookie's name for the console on `port`.
    static func cookieName(port: Int) -> String { "media-console-token-\(port)" }

    /// `text` with every byte but the unreserved ones as `%XX`: safe in a cookie value.
    static func cookieValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? ""
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let name = Self.cookieName(port: port.value.load(ordering: .relaxed))
        let query = request.uri.queryParameters.get("token").map { String($0) }
        let bearer = request.headers[.authorization].flatMap { value -> String? in
            value.hasPrefix("Bearer ") ? String(value.dropFirst("Bearer ".count)) : nil
        }
        let cookie = request.headers[values: .cookie].lazy.flatMap { $0.split(separator: ";") }.compactMap { pair -> String? in
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return parts.count == 2 && parts[0] == name ? parts[1].removingPercentEncoding : nil
        }.first
        let queryIsRight = query.map(secret.constantTimeEquals) == true
        let headerIsRight = queryIsRight || bearer.map(secret.constantTimeEquals) == true
        let cookieIsRight = cookie.map(secret.constantTimeEquals) == true
        guard headerIsRight || cookieIsRight else {
            throw HTTPError(.unauthorized, message: "This console needs its token: add ?token=TOKEN or an 'Authorization: Bearer TOKEN' header")
        }
        if !headerIsRight && ![.get, .head, .options].contains(request.method) {
            // The cookie alone: the browser's own page, whose Origin is this server (RequestGuard
            // has refused any other); a request with no Origin at all is not from that page.
            guard request.headers[.origin] != nil else {
                throw HTTPError(.forbidden, message: "This request changes state: give the token in an 'Authorization: Bearer TOKEN' header")
            }
        }
        var response = try await next(request, context)
        if queryIsRight && !cookieIsRight {
            response.headers[.setCookie] = "\(name)=\(Self.cookieValue(secret)); Path=/; HttpOnly; SameSite=Strict"
        }
        return response
    }
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
