#!/bin/sh
# report_browser.sh - the report as a person sees it: a small report rendered by headless
# Chromium, which must load every image, show every section with content and the gate's
# verdict, and raise no script error (tests/report/probe.html); a screenshot of its top is
# kept in $BUILD/report_browser.png and must not be blank. A copy with one image removed must
# be caught, so the probe itself is tested. Without chromium: one line and exit 0 (make deps
# installs it).
cd "$(dirname "$0")/.." || exit 2
build=${BUILD:-build}
bin=$build/sampbench
if ! command -v chromium >/dev/null 2>&1; then
	echo "report_browser: skipped: chromium not installed (apt-get install chromium)"
	exit 0
fi
tmp=$(mktemp -d /tmp/sbbrowser.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT

# probe DIR: the probe's verdict on DIR/report
probe() {
	cp tests/report/probe.html "$1/probe.html"
	chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-sync \
		--disable-background-networking --disable-component-update \
		--user-data-dir="$tmp/profile" --allow-file-access-from-files \
		--virtual-time-budget=10000 --dump-dom "file://$1/probe.html" 2>/dev/null |
		awk '/<pre id="out">/ { on = 1 } on { print } on && /<\/pre>/ { exit }' |
		sed 's/<[^>]*>//g'
}

$bin run -q -s itimer,mach -w skewed -t 2 -d 0.3 -r 2 -o "$tmp/r.h5" >/dev/null 2>&1 &&
	$bin report "$tmp/r.h5" -o "$tmp/good/report" >/dev/null || {
	echo "report_browser: cannot make the report"
	exit 1
}
rc=0
said=$(probe "$tmp/good")
case $said in
ok:*) echo "report_browser: $said" ;;
*) echo "report_browser: the report as rendered: $said"; rc=1 ;;
esac
cp -r "$tmp/good" "$tmp/bad"
rm "$tmp/bad/report/latency_cdf.png"
said=$(probe "$tmp/bad")
case $said in
*"image latency_cdf.png did not load"*) echo "report_browser: a missing image is caught" ;;
*) echo "report_browser: a missing image went unseen: $said"; rc=1 ;;
esac
shot=$build/report_browser.png
chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-sync \
	--user-data-dir="$tmp/profile" --screenshot="$shot" --window-size=1200,1400 \
	"file://$tmp/good/report/index.html" >/dev/null 2>&1
if /usr/bin/python3 -c "import sys, matplotlib.image as m; a = m.imread(sys.argv[1]); sys.exit(0 if a.std() > 0.05 else 1)" "$shot"; then
	echo "report_browser: screenshot $shot"
else
	echo "report_browser: screenshot $shot is blank or missing"
	rc=1
fi
exit $rc
