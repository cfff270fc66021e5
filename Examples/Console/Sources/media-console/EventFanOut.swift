import Foundation
import Hummingbird

/// Server-sent events that many pages follow from one source (the `DeviceMonitor`, a camera's
/// `controlChanges()`): the first page starts the source, each event is encoded once and goes to
/// every page, and the source stops when the last page goes. N pages cost the library one
/// subscription (one descriptor and one thread), not N.
actor EventFanOut {
    /// Stops a running source (its reader tasks and its library object); called once.
    typealias Stop = @Sendable () -> Void

    /// What one start of a source feeds: the fan-out's pages, for as long as that start runs (a
    /// reader still draining after its source was stopped, or replaced, reaches no page).
    struct Feed: Sendable {
        let fanOut: EventFanOut
        let generation: UInt64

        /// Sends `value` as the event `name` to every page.
        func send(_ name: String, _ value: some Encodable & Sendable) async {
            await fanOut.broadcast(name, value, generation: generation)
        }

        /// The source ended by itself (its camera went): every page's stream ends, and the
        /// pages' `EventSource`s reconnect, which starts a fresh source.
        func ended() async { await fanOut.sourceEnded(generation: generation) }
    }

    /// What the log calls it: "device events", "the events of video0".
    let name: String
    private var streams: [UInt64: EventStream] = [:]
    private var nextPage: UInt64 = 0
    private var generation: UInt64 = 0
    private var stop: Stop?

    init(name: String) { self.name = name }

    /// The pages following it now.
    var pages: Int { streams.count }

    /// A new page's event stream. When no source runs, `start` starts one feeding this fan-out
    /// and returns what stops it; its error (an HTTP error) goes to the page that asked.
    func subscribe(starting start: @Sendable (Feed) throws -> Stop) throws -> Response {
        if stop == nil {
            generation += 1
            stop = try start(Feed(fanOut: self, generation: generation))
            say("started \(name)")
        }
        nextPage += 1
        let page = nextPage
        let events = EventStream()
        streams[page] = events
        return events.response { Task { await self.leave(page) } }
    }

    /// Gives `value`, encoded once, to every page, if `generation` is the running source's.
    private func broadcast(_ name: String, _ value: some Encodable, generation: UInt64) {
        guard generation == self.generation, stop != nil, let message = EventStream.message(name, value) else { return }
        for events in streams.values { events.send(message) }
    }

    /// Ends every page's stream and releases the source, if `generation` is the running one's.
    private func sourceEnded(generation: UInt64) {
        guard generation == self.generation, stop != nil else { return }
        let ended = Array(streams.values)
        streams.removeAll()   // their leaving is then a no-op
        halt(because: "its source ended")
        for events in ended { events.finish() }
    }

    /// Forgets a page; stops the source when it was the last.
    private func leave(_ page: UInt64) {
        guard streams.removeValue(forKey: page) != nil, streams.isEmpty else { return }
        halt(because: "the last page left")
    }

    private func halt(because reason: String) {
        guard let stop else { return }
        self.stop = nil
        stop()
        say("stopped \(name) (\(reason))")
    }
}
