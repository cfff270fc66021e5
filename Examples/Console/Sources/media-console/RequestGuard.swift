import Foundation
import HTTPTypes
import Hummingbird

/// What every answer carries, whatever route (or error) made it: the page may not be framed by
/// another site (clickjacking), no type is sniffed from a body, and no URL (nor its `?token=`)
/// leaks in a `Referer`.
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    static var headers: [(HTTPField.Name, String)] {
        [(HTTPField.Name("X-Frame-Options")!, "DENY"),
         (.contentSecurityPolicy, "frame-ancestors 'none'"),
         (.xContentTypeOptions, "nosniff"),
         (HTTPField.Name("Referrer-Policy")!, "no-referrer")]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        for (name, value) in Self.headers { response.headers[name] = value }
        return response
    }
}

/// Who may reach the console, judged before any route runs:
/// - the `Host` header must name the server as it is bound: a loopback name or address, an
///   address literal, or a name given with `--host` or `--allowed-host` (421 otherwise: another
///   name that resolves here is DNS rebinding);
/// - a request under `/api/` a browser marks as coming from another site (`Sec-Fetch-Site`
///   neither `same-origin` nor `none`) or whose `Origin` is not this server gets 403, before
///   anything starts a camera (an `<img>` or a form on another site's page);
/// - a request that changes state (any method but GET, HEAD, OPTIONS) must say
///   `Content-Type: application/json` (415 otherwise: no form or `text/plain` "simple" request).
struct RequestGuard<Context: RequestContext>: RouterMiddleware {
    /// The names (lower case, no port) the `Host` header may give besides loopback ones and
    /// address literals.
    let allowedHosts: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let host = request.head.authority
        if let host, !isAllowed(hostHeader: host) {
            throw HTTPError(.misdirectedRequest, message: "media-console: Host \(host) is not a name this console answers to (give it with --allowed-host)")
        }
        let path = request.uri.path
        let changesState = ![.get, .head, .options].contains(request.method)
        if path.hasPrefix("/api/") || changesState {
            if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin", site != "none" {
                throw HTTPError(.forbidden, message: "media-console: a request from another site (Sec-Fetch-Site: \(site)) is refused")
            }
            if let origin = request.headers[.origin], !Self.isSameOrigin(origin, host: host) {
                throw HTTPError(.forbidden, message: "media-console: a request from another origin (\(origin)) is refused")
            }
        }
        if changesState {
            let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard type == "application/json" else {
                throw HTTPError(.unsupportedMediaType, message: "media-console: send Content-Type: application/json")
            }
        }
        return try await next(request, context)
    }

    /// Whether the `Host` header `value` (`name[:port]`, `[v6][:port]`) names this server.
    func isAllowed(hostHeader value: String) -> Bool {
        let name = Self.hostName(value)
        if name.isEmpty { return false }
        if isLoopback(name) || name == "localhost" || isAddressLiteral(name) { return true }
        return allowedHosts.contains(name)
    }

    /// The host part of a `Host` header or of an origin's authority, lower case, brackets kept
    /// off an IPv6 literal.
    static func hostName(_ authority: String) -> String {
        let value = authority.lowercased()
        if value.hasPrefix("[") {
            guard let end = value.firstIndex(of: "]") else { return "" }
            return String(value[value.index(after: value.startIndex)..<end])
        }
        return String(value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// Whether `origin` (`scheme://host[:port]`) is this server as the request's `Host` names it.
    static func isSameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, origin.hasPrefix("http://") || origin.hasPrefix("https://") else { return false }
        let authority = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init) ?? ""
        return authority.lowercased() == host.lowercased()
    }
}

/// Whether `host` is a loopback name or address: `localhost`, an IPv4 address in 127.0.0.0/8
/// (parsed as an address: `127.evil.com` is a name, not loopback) or `::1`.
func isLoopback(_ host: String) -> Bool {
    var name = host.lowercased()
    if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    if name == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, name, &v6) == 1 {
        return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
    }
    return false
}

/// Whether `name` is an IPv4 or IPv6 address written out (no DNS name can rebind it).
func isAddressLiteral(_ name: String) -> Bool {
    var v4 = in_addr(), v6 = in6_addr()
    return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
}
