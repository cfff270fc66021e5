/// The EXAMPLES section of each command's help (`CommandConfiguration.discussion`): invocations
/// that work as written (DEVICE 0 is the first camera or audio device `list` shows;
/// `testpattern` needs no device). ArgumentParser wraps help at 80 columns, so each comment
/// stands on a line of its own.
enum Examples {
    static let tool = """
        EXAMPLES:
          mediadevices list                      # cameras, audio devices and screens
          mediadevices formats 0                 # what camera 0 offers
          mediadevices capture testpattern --frames 30 --output bars.y4m
          mediadevices capture 0 --size 1280x720 --output - | ffplay -
          mediadevices snapshot 0 --output photo.jpg
          mediadevices record default --output voice.wav    # until Ctrl-C
          mediadevices screenshot --output screen.png

        Exit status: 0 on success; 1 when a device or the system fails (the error \
        object with --json); 64 on a usage error (a bad option, value or file name); \
        130 or 143 when Ctrl-C or SIGTERM stops a capture or recording that had a \
        set length. See docs/cli.md.
        """

    static let list = """
        EXAMPLES:
          mediadevices list
          mediadevices list --json
          mediadevices list --backend v4l2 --backend pipewire   # both routes
        """

    static let formats = """
        EXAMPLES:
          mediadevices formats 0
          mediadevices formats /dev/video0 --json
          mediadevices formats testpattern
          mediadevices formats pipewire:42 --backend pipewire
        """

    static let controls = """
        EXAMPLES:
          mediadevices controls 0
          mediadevices controls 0 --set brightness=10 --set contrast=20
          mediadevices controls 0 --save profile.json
          mediadevices controls 0 --load profile.json
          mediadevices controls 0 --watch --count 5 --timeout 30
        """

    static let capture = """
        EXAMPLES:
          mediadevices capture testpattern --frames 30 --output bars.y4m
          mediadevices capture 0 --size 1280x720 --frames 300 --output clip.y4m
          mediadevices capture 0 --format MJPG --frames 300 --output clip.mjpeg
          mediadevices capture 0 --audio hw:Loopback,1,0 --frames 250 --output clip.mkv
          mediadevices capture 0 --output-size 480x480 --rotate 90 --output square.y4m
          mediadevices capture 0 --frames 1000000 --output - | ffplay -
          mediadevices capture screen:0 --frames 60 --output screen.y4m
          mediadevices capture testpattern --frames 30 --output bars.y4m --json

        On a terminal, a progress line (frames, fps, drops) is redrawn on standard \
        error while it runs. Ctrl-C stops early and keeps the frames written so far.
        """

    static let snapshot = """
        EXAMPLES:
          mediadevices snapshot 0 --output photo.jpg
          mediadevices snapshot 0 --size 1920x1080 --skip 10 --output photo.png
          mediadevices snapshot testpattern --output bars.png
        """

    static let record = """
        EXAMPLES:
          mediadevices record default --output voice.wav         # until Ctrl-C
          mediadevices record default --seconds 5 --output voice.wav
          mediadevices record hw:Loopback,1,0 --seconds 2 --output loop.wav --json
          mediadevices record plughw:0 --rate 16000 --channels 1 --meter --output m.wav

        Without --seconds it records until Ctrl-C (SIGINT) or SIGTERM, as arecord \
        does, then completes the WAV file and exits 0. On a terminal, a progress line \
        (seconds, peak level, xruns) is redrawn on standard error while it runs.
        """

    static let play = """
        EXAMPLES:
          mediadevices play default voice.wav
          mediadevices play plughw:0 voice.wav --json
        """

    static let duplex = """
        EXAMPLES:
          mediadevices duplex --play far.wav --output near.wav
          mediadevices duplex --play far.wav --output near.wav --library speexdsp
          mediadevices duplex --play far.wav --output near.wav --rate 16000 --json
        """

    static let monitor = """
        EXAMPLES:
          mediadevices monitor
          mediadevices monitor --kinds camera,sound --json
          mediadevices monitor --count 1 --timeout 60
        """

    static let orientation = """
        EXAMPLES:
          mediadevices orientation
          mediadevices orientation --watch --json
          mediadevices orientation --display /dev/dri/card0 --connector eDP-1
          mediadevices orientation --camera 0
        """

    static let screens = """
        EXAMPLES:
          mediadevices screens
          mediadevices screens --backend x11 --json
        """

    static let screenshot = """
        EXAMPLES:
          mediadevices screenshot --output screen.png
          mediadevices screenshot screen:1 --region 640x480+0+0 --output corner.jpg
          mediadevices screenshot --backend kms --cursor --output screen.png
        """

    static let publish = """
        EXAMPLES:
          mediadevices publish testpattern --pipewire
          mediadevices publish 0 --pipewire my_camera --on-demand
          mediadevices publish testpattern --v4l2loopback /dev/video10
          mediadevices publish 0 --pipewire --v4l2loopback /dev/video10 --on-demand
          mediadevices publish 0 --v4l2loopback /dev/video10 --size 1280x720

        A PipeWire node needs a PipeWire session (a desktop session runs one). For a loopback device, load the module first (Debian: apt install v4l2loopback-dkms): \
        sudo modprobe v4l2loopback video_nr=10 exclusive_caps=1 card_label="Virtual Camera"
        """
}
