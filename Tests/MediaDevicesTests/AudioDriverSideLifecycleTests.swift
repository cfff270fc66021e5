import Dispatch
import Foundation
import Synchronization
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// A backend stream without a device whose every run ends at once with an I/O failure (as a
/// device that fails does), so the side's `onStop` runs on the audio thread right after `start`.
private final class FailingStream: AudioBackendStream {
    let format = AudioFormat(sampleRate: 48000, channels: 1)
    let periodFrames = 480
    let bufferFrames = 1920

    func run(port: AudioBusPort, counters: AudioCounters, wake: WakeUpEvent, observer: AudioPeriodObserver?,
             shouldStop: () -> Bool) -> MediaDevicesError? {
        MediaDevicesError(.io, device: "test:failing", operation: "snd_pcm_readi", detail: "the stand-in device failed")
    }

    func close() {}
}

/// A backend stream that runs periods (one every 5 ms, calling the observer after each) until it
/// is told to stop, and records whether it was closed while a run was still using it.
private final class PeriodStream: AudioBackendStream {
    let format = AudioFormat(sampleRate: 48000, channels: 1)
    let periodFrames = 240
    let bufferFrames = 960
    private let running = Atomic(false)
    let closedWhileRunning = Atomic(false)
    let closes = Atomic(0)
    let runsEnded = Atomic(0)

    func run(port: AudioBusPort, counters: AudioCounters, wake: WakeUpEvent, observer: AudioPeriodObserver?,
             shouldStop: () -> Bool) -> MediaDevicesError? {
        running.store(true, ordering: .sequentiallyConsistent)
        defer {
            running.store(false, ordering: .sequentiallyConsistent)
            runsEnded.add(1, ordering: .sequentiallyConsistent)
        }
        var periods = 0
        while !shouldStop() {
            periods += 1
            observer?(periods)
            usleep(5_000)  // the rest of the period: the device would be read here
        }
        return nil
    }

    func close() {
        if running.load(ordering: .sequentiallyConsistent) { closedWhileRunning.store(true, ordering: .sequentiallyConsistent) }
        closes.add(1, ordering: .sequentiallyConsistent)
    }
}

/// The rules for calls into an `AudioDriverSide` made from its own `onStop` (on the audio thread)
/// and from other threads at the same time: no lock is held while a thread is joined, so an
/// `onStop` that reads the side never waits for a `start()` that waits for it.
final class AudioDriverSideLifecycleTests: XCTestCase {
    private let device = AudioDevice(name: "failing", description: "a stand-in input", direction: .input,
                                     isDefault: false, backend: .alsa)

    private func side() throws -> AudioDriverSide {
        let side = AudioDriverSide(direction: .input, bus: AudioBus(capacityBytes: 1 << 16), opener: { _, _, _ in FailingStream() })
        try side.initialize(device: device, format: AudioFormat(sampleRate: 48000, channels: 1))
        return side
    }

    /// The deadlock of the issue: a run ends on its own and its `onStop` reads the side
    /// (`device`) while another thread calls `start()`. `start()` used to join the ended
    /// run's thread while holding the side's lock, which `onStop` waited for: both waited forever.
    func testOnStopReadingTheSideWhileAnotherThreadStartsDoesNotDeadlock() throws {
        let side = try side()
        let inFirstOnStop = DispatchSemaphore(value: 0)
        let reads = Locked(0)
        side.onStop = { [unowned side] error in
            guard reads.value == 0 else { return }
            XCTAssertEqual(error?.code, .io)
            inFirstOnStop.signal()
            usleep(300_000)  // the other thread calls start() meanwhile
            XCTAssertEqual(side.device?.name, "failing")
            XCTAssertNotNil(side.format)
            reads.value = 1
        }
        try side.start()
        XCTAssertEqual(inFirstOnStop.wait(timeout: .now() + 20), .success, "the run ended and onStop ran")
        let started = DispatchSemaphore(value: 0)
        let outcome = Locked("")
        Thread {
            do { try side.start(); outcome.value = "started" } catch { outcome.value = "\(error)" }
            started.signal()
        }.start()
        XCTAssertEqual(started.wait(timeout: .now() + 20), .success,
                       "start() returned while the ended run's onStop read the side (no deadlock)")
        XCTAssertEqual(outcome.value, "started")
        XCTAssertEqual(reads.value, 1, "onStop read the side and returned")
        side.terminate()
    }

    /// `start()` from the side's own `onStop` is refused with `.invalidState` (it would start a
    /// run from inside the run that is ending), and `stop()` there returns at once.
    func testStartFromOnStopIsRefusedAndStopReturns() throws {
        let side = try side()
        let done = DispatchSemaphore(value: 0)
        let calls = Locked(0)
        let refusal = Locked<MediaDevicesError?>(nil)
        side.onStop = { [unowned side] _ in
            guard calls.value == 0 else { return }
            calls.value = 1
            do { try side.start() } catch let error as MediaDevicesError { refusal.value = error } catch {}
            side.stop()
            done.signal()
        }
        try side.start()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "onStop's calls returned")
        let error = try XCTUnwrap(refusal.value, "start() from onStop throws")
        XCTAssertEqual(error.code, .invalidState)
        XCTAssertTrue(error.description.contains("another thread"), error.description)
        XCTAssertFalse(side.isStarted)
        // From another thread it starts again.
        try side.start()
        side.terminate()
    }

    /// `switchDevice` from `onStop` is refused too: it would stop and start the side from its
    /// own audio thread.
    func testSwitchDeviceFromOnStopIsRefused() throws {
        let side = try side()
        let done = DispatchSemaphore(value: 0)
        let refusal = Locked<MediaDevicesError?>(nil)
        let calls = Locked(0)
        let other = AudioDevice(name: "other", description: "another stand-in", direction: .input, isDefault: false, backend: .alsa)
        side.onStop = { [unowned side] _ in
            guard calls.value == 0 else { return }
            calls.value = 1
            do { try side.switchDevice(to: other) } catch let error as MediaDevicesError { refusal.value = error } catch {}
            done.signal()
        }
        try side.start()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(refusal.value?.code, .invalidState)
        XCTAssertEqual(side.device?.name, "failing", "the side stayed on its device")
        side.terminate()
    }
}

/// `terminate()` (and `stop()`) from the side's own period observer, on the audio thread: they
/// only stop the run (it ends when the observer returns); the device is never closed under the
/// run still using it, and a `terminate()` from another thread closes it afterwards.
final class AudioDriverSideTerminateFromObserverTests: XCTestCase {
    func testTerminateFromThePeriodObserverOnlyStopsAndNeverClosesUnderTheRun() throws {
        let stream = PeriodStream()
        let side = AudioDriverSide(direction: .input, bus: AudioBus(capacityBytes: 1 << 16), opener: { _, _, _ in stream })
        try side.initialize(device: AudioDevice(name: "periods", description: "a stand-in input", direction: .input,
                                                isDefault: false, backend: .alsa),
                            format: AudioFormat(sampleRate: 48000, channels: 1))
        let called = DispatchSemaphore(value: 0)
        let calls = Atomic(0)
        side.periodObserver = { [unowned side] periods in
            guard periods == 3, calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 else { return }
            side.terminate()
            called.signal()
        }
        try side.start()
        XCTAssertEqual(called.wait(timeout: .now() + 20), .success, "terminate() from the observer returned")
        let deadline = Date().addingTimeInterval(10)
        while stream.runsEnded.load(ordering: .sequentiallyConsistent) == 0, Date() < deadline { usleep(5_000) }
        XCTAssertEqual(stream.runsEnded.load(ordering: .sequentiallyConsistent), 1, "the run ended after the observer returned")
        XCTAssertFalse(stream.closedWhileRunning.load(ordering: .sequentiallyConsistent),
                       "the device was closed while its run was still using it")
        XCTAssertEqual(stream.closes.load(ordering: .sequentiallyConsistent), 0, "terminate() on the audio thread does not close the device")
        XCTAssertFalse(side.isStarted)
        side.terminate()
        XCTAssertEqual(stream.closes.load(ordering: .sequentiallyConsistent), 1, "terminate() from another thread closes it")
        XCTAssertFalse(stream.closedWhileRunning.load(ordering: .sequentiallyConsistent))
    }
}

/// A value shared between the test and the audio thread.
private final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
