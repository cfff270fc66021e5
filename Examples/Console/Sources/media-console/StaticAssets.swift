import Foundation
import Hummingbird

/// The page's files, read once from the package's own Resources: only these names are ever
/// served, so no request path can reach another file.
struct StaticAssets: Sendable {
    /// File name → (content type, bytes).
    let files: [String: (contentType: String, bytes: ByteBuffer)]

    /// The names the page is made of.
    static let names: [(name: String, contentType: String)] = [
        ("index.html", "text/html; charset=utf-8"),
        ("app.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    ]

    /// Reads every asset from the bundle; fails naming the one missing (a broken install).
    static func load() throws -> StaticAssets {
        var files: [String: (String, ByteBuffer)] = [:]
        for (name, type) in names {
            let (stem, suffix) = (String(name.split(separator: ".")[0]), String(name.split(separator: ".")[1]))
            guard let url = Bundle.module.url(forResource: stem, withExtension: suffix, subdirectory: "Resources"),
                  let data = FileManager.default.contents(atPath: url.path) else {
                throw ConsoleError("media-console: the page's file Resources/\(name) is missing from \(Bundle.module.bundlePath); rebuild the console (swift build)")
            }
            files[name] = (type, ByteBuffer(bytes: data))
        }
        return StaticAssets(files: files)
    }

    /// The response for asset `name`, or 404 for any name that is not one of the page's files.
    func response(for name: String) throws -> Response {
        guard let file = files[name] else { throw HTTPError(.notFound) }
        return Response(status: .ok, headers: [.contentType: file.contentType, .cacheControl: "no-cache"],
                        body: ResponseBody(byteBuffer: file.bytes))
    }
}

/// A startup failure the console reports and exits on.
struct ConsoleError: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    let description: String
    init(_ description: String) { self.description = description }
}
