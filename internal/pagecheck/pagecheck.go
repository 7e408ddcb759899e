// Package pagecheck lays benchseal's HTML pages out in headless Chromium
// at the widths people read them at and reports, element by element, what
// a reader would not see: content past the page's edge or out of its box,
// text cut off, cards that overlap, a table column scrolled out of view.
// It is a test tool (make screenshot-check); nothing in the product
// imports it.
package pagecheck

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Viewport is a width a page is read at.
type Viewport struct {
	// Name is how a problem names the viewport ("1280 px").
	Name          string
	Width, Height int
	// Print lays the page out with its print style sheet.
	Print bool
}

// Viewports are the widths every page is checked at: a laptop, a wide
// monitor, and A4 paper: 210 mm at 96 px per inch less Chromium's default
// print margins of 0.4 in each side is 717 px of content.
var Viewports = []Viewport{
	{Name: "1280 px", Width: 1280, Height: 900},
	{Name: "1920 px", Width: 1920, Height: 1080},
	{Name: "print (A4, 717 px)", Width: 717, Height: 1047, Print: true},
}

// Problem is one thing a reader would not see.
type Problem struct {
	Page, Viewport string
	// Kind is viewport, container, spill, clipped, hidden or overlap
	// (measure.js says what each means).
	Kind    string `json:"kind"`
	Element string `json:"element"`
	Detail  string `json:"detail"`
}

func (p Problem) String() string {
	return fmt.Sprintf("%s at %s: %s: %s: %s", p.Page, p.Viewport, p.Kind, p.Element, p.Detail)
}

//go:embed measure.js
var measureJS string

// Options say where Chromium is and what else to write.
type Options struct {
	// Chromium is the browser binary.
	Chromium string
	// Shots, when set, is a directory to write a full-page PNG of every
	// page at every viewport into (PAGE-WIDTH.png).
	Shots string
}

// Check lays out every page (an HTML file) at every viewport and returns
// the problems found, in page, viewport and document order. The error is
// for a browser that could not be run, never for a problem.
func Check(ctx context.Context, pages []string, vps []Viewport, o Options) ([]Problem, error) {
	dir, err := os.MkdirTemp("", "pagecheck-profile-")
	if err != nil {
		return nil, fmt.Errorf("check pages: %w", err)
	}
	defer os.RemoveAll(dir)
	b, err := startBrowser(ctx, o.Chromium, dir)
	if err != nil {
		return nil, err
	}
	defer b.close()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, err
	}
	s := att.SessionID
	if err := b.call(ctx, s, "Page.enable", nil, nil); err != nil {
		return nil, err
	}
	var out []Problem
	for _, page := range pages {
		abs, err := filepath.Abs(page)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", page, err)
		}
		for _, vp := range vps {
			ps, err := checkOne(ctx, b, s, abs, vp, o.Shots)
			if err != nil {
				return nil, fmt.Errorf("check %s at %s: %w", page, vp.Name, err)
			}
			for i := range ps {
				ps[i].Page, ps[i].Viewport = filepath.Base(page), vp.Name
			}
			out = append(out, ps...)
		}
	}
	return out, nil
}

// checkOne loads one page at one viewport and runs measure.js in it.
func checkOne(ctx context.Context, b *browser, s, path string, vp Viewport, shots string) ([]Problem, error) {
	if err := b.call(ctx, s, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": vp.Width, "height": vp.Height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return nil, err
	}
	media := ""
	if vp.Print {
		media = "print"
	}
	if err := b.call(ctx, s, "Emulation.setEmulatedMedia", map[string]any{"media": media}, nil); err != nil {
		return nil, err
	}
	loaded := b.expect(s, "Page.loadEventFired")
	u := url.URL{Scheme: "file", Path: path}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.call(ctx, s, "Page.navigate", map[string]any{"url": u.String()}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("load: %s", nav.ErrorText)
	}
	if err := b.wait(ctx, loaded, "the page to load"); err != nil {
		return nil, err
	}
	var ev struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": measureJS, "returnByValue": true}, &ev); err != nil {
		return nil, err
	}
	if ev.ExceptionDetails != nil {
		return nil, fmt.Errorf("measure.js: %s", ev.ExceptionDetails.Text)
	}
	var ps []Problem
	if err := json.Unmarshal([]byte(ev.Result.Value), &ps); err != nil {
		return nil, fmt.Errorf("measure.js result: %w", err)
	}
	if shots != "" {
		if err := screenshot(ctx, b, s, path, vp, shots); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// screenshot writes the whole page as a PNG named after it and vp.
func screenshot(ctx context.Context, b *browser, s, path string, vp Viewport, dir string) error {
	var lm struct {
		Content struct {
			Width, Height float64
		} `json:"cssContentSize"`
	}
	if err := b.call(ctx, s, "Page.getLayoutMetrics", nil, &lm); err != nil {
		return err
	}
	var shot struct {
		Data string `json:"data"`
	}
	clip := map[string]any{"x": 0, "y": 0, "width": lm.Content.Width, "height": lm.Content.Height, "scale": 1}
	if err := b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true, "clip": clip}, &shot); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	width := fmt.Sprint(vp.Width)
	if vp.Print {
		width = "print"
	}
	return os.WriteFile(filepath.Join(dir, base+"-"+width+".png"), png, 0o644)
}
